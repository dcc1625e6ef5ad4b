import { createHash, createHmac } from "node:crypto";
import type { UserFromGetMe } from "grammy/types";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { createTelegramService, type TelegramServiceOptions } from "../../api/lib/telegram/index.ts";
import { MANIFEST_SCHEMA_VERSION } from "../../site-data/manifest.ts";
import { stablecoinsArtifact } from "../../site-data/stablecoins.ts";
import { type BotApiServer, startBotApiServer, TEST_BOT_INFO } from "./bot-api-server.ts";
import { createTestSchema } from "./pg-schema.ts";

/** The test bot's identity (the local Bot API server's `getMe`). */
export const TEST_BOT_ME: UserFromGetMe = TEST_BOT_INFO;

/** Bot token of the tests (never a real one). */
export const TEST_BOT_TOKEN = "7000000001:AAtest-token-for-ballast-tests-only";
export const WEBHOOK_SECRET = "webhook-secret-0123456789";
export const SITE_SECRET = "site-secret-0123456789";

/** Coins of the test build's stablecoin list (USDS twice: an ambiguous symbol; one unreviewed coin, never followable). */
export const TEST_COINS = [
  { id: "usdt-tether", symbol: "USDT", name: "Tether" },
  { id: "usdc-circle", symbol: "USDC", name: "USD Coin" },
  { id: "dai-sky", symbol: "DAI", name: "Dai" },
  { id: "usds-sky", symbol: "USDS", name: "Sky Dollar" },
  { id: "usds-sperax", symbol: "USDS", name: "Sperax USD" },
  { id: "eurc-circle", symbol: "EURC", name: "Euro Coin" },
];

function coinRow(c: { id: string; symbol: string; name: string }, extra: Record<string, unknown> = {}) {
  return {
    id: c.id,
    name: c.name,
    symbol: c.symbol,
    geckoId: null,
    pegType: "peggedUSD",
    pegMechanism: "fiat-backed",
    priceSource: "test",
    priceConfidence: null,
    price: null,
    priceUpdatedAt: null,
    priceObservedAt: null,
    priceObservedAtMode: null,
    priceSyncedAt: null,
    circulating: {},
    circulatingPrevDay: {},
    circulatingPrevWeek: {},
    circulatingPrevMonth: {},
    chainCirculating: {},
    chains: [],
    consensusSources: [],
    priceUnavailableReason: "no-observation",
    ...extra,
  };
}

/**
 * The objects of a published build holding only a stablecoin list (the bot's coin catalog), by key:
 * `latest.json` → manifest → `site-data/stablecoins.json` with {@link TEST_COINS} and one unreviewed coin.
 */
export function coinListObjects(): Map<string, Uint8Array> {
  const payload = {
    peggedAssets: [
      ...TEST_COINS.map((c) => coinRow(c)),
      coinRow({ id: "zzz-unreviewed-1", symbol: "ZZZ", name: "Unreviewed" }, { unreviewed: true }),
    ],
  };
  const bytes = Buffer.from(JSON.stringify(payload));
  const path = stablecoinsArtifact.outputs.main.path;
  const buildId = "test-build-bot";
  const manifest = {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    buildId,
    asOf: 1_700_000_000,
    generatedAt: 1_700_000_000,
    clock: "wall",
    contentHash: "0".repeat(64),
    files: [
      {
        path,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        bytes: bytes.byteLength,
        rows: payload.peggedAssets.length,
        dataAsOf: 1_700_000_000,
        schemaVersion: stablecoinsArtifact.schemaVersion,
        artifact: "stablecoins",
      },
    ],
    sources: [],
    readerDropped: {},
    circuits: {},
    models: [],
    qualityRejections: {},
  };
  return new Map<string, Uint8Array>([
    [
      "latest.json",
      Buffer.from(JSON.stringify({ buildId, asOf: manifest.asOf, manifest: `builds/${buildId}/manifest.json` })),
    ],
    [`builds/${buildId}/manifest.json`, Buffer.from(JSON.stringify(manifest))],
    [`builds/${buildId}/${path}`, bytes],
  ]);
}

/** {@link coinListObjects} served from memory. */
export function coinListStore(nowMs: () => number): PublishedStore {
  const objects = coinListObjects();
  return new PublishedStore(async (key) => objects.get(key) ?? null, 0, nowMs);
}

/**
 * Signs init data independently of the library, per Telegram's documented algorithm: secret key =
 * HMAC-SHA256(key "WebAppData", message bot token); data-check string = every `key=value` but `hash`,
 * sorted, joined by `\n`; hash = hex HMAC-SHA256(key secret key, message data-check string).
 * Returns the query string (`URLSearchParams` encoding) with `hash` appended.
 */
export function signInitData(fields: Record<string, string>, token = TEST_BOT_TOKEN): string {
  const secret = createHmac("sha256", "WebAppData").update(token).digest();
  const check = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join("\n");
  const hash = createHmac("sha256", secret).update(check).digest("hex");
  return new URLSearchParams({ ...fields, hash }).toString();
}

/**
 * Init data of user `userId` signed at `authDate` (Unix s), with the fields Telegram sends: `query_id`,
 * `user` (JSON), `auth_date`, `signature` (Telegram's Ed25519 signature for third parties; a
 * placeholder here, it is covered by the HMAC like any field but not checked by the bot).
 */
export function initDataFor(userId: number, authDate: number, extra: Record<string, string> = {}): string {
  return signInitData({
    auth_date: String(authDate),
    query_id: `AAq${userId}${authDate}`,
    signature: Buffer.from(`sig-${userId}-${authDate}`).toString("base64url"),
    user: JSON.stringify({ id: userId, first_name: "Test", language_code: "en" }),
    ...extra,
  });
}

/**
 * A bot fixture: a fresh Postgres schema, a key store with one key, the local Bot API server, the
 * bot service on them and an app with both lane secrets and an injectable wall clock (`clock.ms`).
 */
export async function botFixture(prefix: string, opts: Partial<TelegramServiceOptions> = {}) {
  process.env.BALLAST_LOG = "silent";
  const schema = await createTestSchema(prefix);
  const sql: SqlClient = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  const keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  const token = (await keys.create({ name: "t", rateLimitPerMinute: 10000 }, { maxRateLimitPerMinute: 10000 })).token;
  const botApi: BotApiServer = await startBotApiServer();
  const clock = { ms: Date.parse("2026-11-25T12:00:00Z") };
  const nowMs = () => clock.ms;
  const service = createTelegramService({
    sql,
    token: TEST_BOT_TOKEN,
    apiRoot: botApi.apiRoot,
    botInfo: TEST_BOT_ME,
    ...opts,
  });
  const app = createApp({
    store: coinListStore(nowMs),
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "wall",
    nowMs,
    webhookSecret: WEBHOOK_SECRET,
    siteProxySecret: SITE_SECRET,
    services: { telegram: service },
  });
  const now = () => Math.floor(clock.ms / 1000);
  /** Posts an update to the webhook; resolves with the answer once the update's queued replies were sent. */
  const webhook = async (update: unknown, secret: string | null = WEBHOOK_SECRET) => {
    const res = await app.request("/api/telegram-webhook", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(secret === null ? {} : { "X-Telegram-Bot-Api-Secret-Token": secret }),
      },
      body: typeof update === "string" ? update : JSON.stringify(update),
    });
    await service.settled();
    return res;
  };
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    app.request(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  let updateId = 1;
  /** A text message update from user `userId` in their private chat (or in chat `chatId`). */
  const message = (userId: number, text: string, chatId = userId) => {
    const entities = text.startsWith("/")
      ? [{ type: "bot_command", offset: 0, length: text.split(" ")[0].length }]
      : [];
    return {
      update_id: updateId++,
      message: {
        message_id: updateId,
        date: now(),
        text,
        entities,
        from: { id: userId, is_bot: false, first_name: "Test" },
        chat:
          chatId > 0
            ? { id: chatId, type: "private", first_name: "Test" }
            : { id: chatId, type: "group", title: "Test group" },
      },
    };
  };
  /** A `my_chat_member` update: the bot's status in user `userId`'s private chat moved from `from` to `to`. */
  const memberUpdate = (userId: number, from: string, to: string) => ({
    update_id: updateId++,
    my_chat_member: {
      chat: { id: userId, type: "private", first_name: "Test" },
      from: { id: userId, is_bot: false, first_name: "Test" },
      date: now(),
      old_chat_member: {
        user: { id: TEST_BOT_INFO.id, is_bot: true, first_name: TEST_BOT_INFO.first_name },
        status: from,
        ...(from === "kicked" ? { until_date: 0 } : {}),
      },
      new_chat_member: {
        user: { id: TEST_BOT_INFO.id, is_bot: true, first_name: TEST_BOT_INFO.first_name },
        status: to,
        ...(to === "kicked" ? { until_date: 0 } : {}),
      },
    },
  });
  const close = async () => {
    await botApi.close();
    await sql.close();
    await schema.drop();
  };
  return { schema, sql, keys, token, botApi, clock, now, service, app, webhook, post, message, memberUpdate, close };
}

/**
 * The dispatcher fields of spec 2.8 `telegramSummary` before any dispatch run has been recorded:
 * the given lifecycle status and pending count, no backlog, no last run, no safety-alert source.
 */
export const noDispatchRunYet = (
  pendingDeliveryLifecycleStatus: "available" | "unknown",
  pendingDeliveries: number | null,
) => ({
  pendingDeliveries,
  pendingDeliveryLifecycleStatus,
  pendingDeliveryBacklog: 0,
  safetyAlertsSuppressed: false,
  // no run recorded and no safety-alert source read: all null
  ...Object.fromEntries(
    [
      "lastDispatchAt",
      "lastDispatchStatus",
      "safetyAlertSourceState",
      "safetyAlertSourceAgeSeconds",
      "safetyAlertSourceGeneration",
    ].map((k) => [k, null]),
  ),
});

/**
 * An app with no published build (its store finds nothing), on the wall clock, without CORS origins,
 * with its own rate limiter; `extra` adds or overrides createApp options (a webhook secret, services).
 */
export const appWithoutBuild = (keys: KeyStore, extra: Partial<Parameters<typeof createApp>[0]> = {}) =>
  createApp({
    store: new PublishedStore(async () => null, 0),
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "wall",
    ...extra,
  });
