import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { createTelegramService } from "../../api/lib/telegram/index.ts";
import { startBotApiServer, TEST_BOT_INFO } from "../helpers/bot-api-server.ts";
import { must } from "../helpers/must.ts";
import {
  appWithoutBuild,
  botFixture,
  coinListStore,
  noDispatchRunYet,
  TEST_BOT_ME,
  TEST_BOT_TOKEN,
  WEBHOOK_SECRET,
} from "../helpers/telegram.ts";

let f: Awaited<ReturnType<typeof botFixture>>;
beforeAll(async () => {
  f = await botFixture("ballast_tg_bot");
});
afterAll(async () => {
  await f?.close();
});

const follows = async (chatId: number | string) =>
  (
    await f.sql.query<{ kind: string; target: string }>(
      "select kind, target from telegram_follows where chat_id = $1::bigint order by kind, target",
      [String(chatId)],
    )
  ).rows;
const chatRow = async (chatId: number | string) =>
  (
    await f.sql.query<{ active: boolean; inactive_reason: string | null }>(
      "select active, inactive_reason from telegram_chats where chat_id = $1::bigint",
      [String(chatId)],
    )
  ).rows[0];
const repliesTo = (chatId: number) =>
  f.botApi.callsOf("sendMessage").filter((c) => String(c.params.chat_id) === String(chatId));
/** The last reply sent to `chatId` (fails the test, naming the chat, when there is none). */
const lastReplyTo = (chatId: number) => must(repliesTo(chatId).at(-1), `a reply to chat ${chatId}`);

describe("webhook lane and body", () => {
  it("401 without or with a wrong secret (nothing handled); 200 plain-text ok with it, no-store", async () => {
    const before = f.botApi.calls.length;
    expect((await f.webhook(f.message(11, "/help"), null)).status).toBe(401);
    expect((await f.webhook(f.message(11, "/help"), `${WEBHOOK_SECRET}x`)).status).toBe(401);
    expect((await f.webhook(f.message(11, "/help"), "")).status).toBe(401);
    expect(f.botApi.calls.length).toBe(before);
    const ok = await f.webhook(f.message(11, "/help"));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("ok");
    expect(ok.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(ok.headers.get("cache-control")).toBe("no-store");
    const reply = repliesTo(11);
    expect(reply).toHaveLength(1);
    expect(reply[0].token).toBe(TEST_BOT_TOKEN);
    expect(String(reply[0].params.text)).toContain("/follow");
  });

  it("400 on a body that is not JSON or not an update, 413 past 1 MiB; nothing stored", async () => {
    await f.service.store.ensureSchema();
    const bad = await f.webhook("{not json");
    expect([bad.status, (await bad.json()).error]).toEqual([400, "Invalid JSON body"]);
    const noId = await f.webhook({ message: { text: "/follow USDT" } });
    expect(noId.status).toBe(400);
    expect((await noId.json()).error).toContain("update_id");
    const big = await f.webhook({ update_id: 1, pad: "x".repeat(1_100_000) });
    expect(big.status).toBe(413);
    expect((await f.sql.query("select 1 from telegram_chats")).rows).toHaveLength(0);
  });
});

describe("commands", () => {
  it("/follow by symbol, id and preset stores the follows and replies to that chat through the Bot API", async () => {
    const res = await f.webhook(f.message(101, "/follow USDT, dai-sky majors"));
    expect([res.status, await res.text()]).toEqual([200, "ok"]);
    expect(await follows(101)).toEqual([
      { kind: "coin", target: "dai-sky" },
      { kind: "coin", target: "usdt-tether" },
      { kind: "preset", target: "majors" },
    ]);
    expect(await chatRow(101)).toEqual({ active: true, inactive_reason: null });
    const reply = lastReplyTo(101);
    expect(reply.params.chat_id).toBe(101);
    expect(String(reply.params.text)).toMatch(/Following preset majors, USDT \(usdt-tether\), DAI \(dai-sky\)/);
  });

  it("an ambiguous symbol or unknown coin follows nothing and says why; the unreviewed coin is not followable", async () => {
    await f.webhook(f.message(102, "/follow USDS zzz-unreviewed-1 nosuchcoin"));
    expect(await follows(102)).toEqual([]);
    const text = String(lastReplyTo(102).params.text);
    expect(text).toContain("USDS is ambiguous: usds-sky, usds-sperax");
    expect(text).toContain("zzz-unreviewed-1: unknown coin or preset");
    expect(text).toContain("nosuchcoin: unknown coin or preset");
  });

  it("/unfollow removes follows; /list shows what is left", async () => {
    await f.webhook(f.message(103, "/follow usdc-circle eurc-circle all"));
    await f.webhook(f.message(103, "/unfollow EURC all"));
    expect(await follows(103)).toEqual([{ kind: "coin", target: "usdc-circle" }]);
    await f.webhook(f.message(103, "/list"));
    expect(String(lastReplyTo(103).params.text)).toBe("Coins:\n• USDC (usdc-circle)");
  });

  it("a group command (/follow@bot) follows for the group's (negative, > 32-bit) chat id", async () => {
    const group = -1001234567890123;
    await f.webhook(f.message(104, `/follow@${TEST_BOT_INFO.username} usdt-tether`, group));
    expect(await follows(group)).toEqual([{ kind: "coin", target: "usdt-tether" }]);
    expect(repliesTo(group)).toHaveLength(1);
    const m = await f.service.followers.followersOf(["usdt-tether"]);
    expect(m.get("usdt-tether")).toContain(String(group));
  });
});

describe("followers (FollowerLookup) and lifecycle", () => {
  const big = 5_000_000_000_123; // a chat id beyond 32 bits

  it("presets imply their coins: majors → USDC but not EURC; all → every coin", async () => {
    await f.webhook(f.message(201, "/follow majors"));
    await f.webhook(f.message(big, "/follow all"));
    const m = await f.service.followers.followersOf(["usdc-circle", "eurc-circle", "not-listed-coin"]);
    expect(m.get("usdc-circle")).toEqual(expect.arrayContaining(["201", String(big)]));
    expect(m.get("eurc-circle")).toContain(String(big));
    expect(m.get("eurc-circle")).not.toContain("201");
    expect(m.get("not-listed-coin")).toEqual([String(big)]); // `all` covers coins listed later
    expect((await f.service.followers.followersOf([])).size).toBe(0);
  });

  it("/stop makes the chat inactive: followersOf excludes it, follows are kept; /start brings it back", async () => {
    await f.webhook(f.message(202, "/follow usdc-circle"));
    expect((await f.service.followers.followersOf(["usdc-circle"])).get("usdc-circle")).toContain("202");
    await f.webhook(f.message(202, "/stop"));
    expect(await chatRow(202)).toEqual({ active: false, inactive_reason: "stopped" });
    expect((await f.service.followers.followersOf(["usdc-circle"])).get("usdc-circle")).not.toContain("202");
    expect(await follows(202)).toEqual([{ kind: "coin", target: "usdc-circle" }]);
    expect(String(lastReplyTo(202).params.text)).toContain("Alerts stopped");
    await f.webhook(f.message(202, "/start"));
    expect(await chatRow(202)).toEqual({ active: true, inactive_reason: null });
    expect((await f.service.followers.followersOf(["usdc-circle"])).get("usdc-circle")).toContain("202");
    const events = (
      await f.sql.query<{ kind: string }>("select kind from telegram_chat_events where chat_id = 202 order by id")
    ).rows.map((r) => r.kind);
    expect(events).toEqual(["new", "churn", "reactivate"]);
  });

  it("my_chat_member kicked (bot blocked) marks the chat inactive, member again opts it back in", async () => {
    await f.webhook(f.message(203, "/follow USDT"));
    const res = await f.webhook(f.memberUpdate(203, "member", "kicked"));
    expect([res.status, await res.text()]).toEqual([200, "ok"]);
    expect(await chatRow(203)).toEqual({ active: false, inactive_reason: "blocked" });
    expect((await f.service.followers.followersOf(["usdt-tether"])).get("usdt-tether")).not.toContain("203");
    await f.webhook(f.memberUpdate(203, "kicked", "member"));
    expect(await chatRow(203)).toEqual({ active: true, inactive_reason: null });
  });

  it("a reply refused with 403 (blocked) still answers ok, keeps the follow and marks the chat inactive; other send errors only log", async () => {
    f.botApi.failNext("sendMessage", {
      ok: false,
      error_code: 403,
      description: "Forbidden: bot was blocked by the user",
    });
    const res = await f.webhook(f.message(204, "/follow USDC"));
    expect([res.status, await res.text()]).toEqual([200, "ok"]);
    expect(await follows(204)).toEqual([{ kind: "coin", target: "usdc-circle" }]);
    expect(await chatRow(204)).toEqual({ active: false, inactive_reason: "blocked" });
    f.botApi.failNext("sendMessage", { ok: false, error_code: 400, description: "Bad Request: something" });
    const res2 = await f.webhook(f.message(205, "/follow USDC"));
    expect([res2.status, await res2.text()]).toEqual([200, "ok"]);
    expect(await chatRow(205)).toEqual({ active: true, inactive_reason: null });
  });

  it("health summary counts every stored chat; dispatcher fields unknown without a dispatcher", async () => {
    const { rows } = await f.sql.query<{ c: string }>("select count(*) as c from telegram_chats");
    expect(await f.service.summary(f.now())).toEqual({
      totalChats: Number(rows[0].c),
      ...noDispatchRunYet("unknown", null),
    });
  });
});

describe("webhook error policy", () => {
  it("state store down: 503 with Retry-After (Telegram retries), no reply sent; a handler bug is acknowledged with ok", async () => {
    const down = {
      query: async () => {
        throw new Error("connection refused");
      },
      close: async () => undefined,
    };
    const service = createTelegramService({
      sql: down,
      token: TEST_BOT_TOKEN,
      apiRoot: f.botApi.apiRoot,
      botInfo: TEST_BOT_ME,
    });
    const app = appWithoutBuild(f.keys, { webhookSecret: WEBHOOK_SECRET, services: { telegram: service } });
    const before = f.botApi.callsOf("sendMessage").length;
    const res = await app.request("/api/telegram-webhook", {
      method: "POST",
      headers: { "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET },
      body: JSON.stringify(f.message(301, "/follow majors")),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect(f.botApi.callsOf("sendMessage").length).toBe(before);

    // A failure that is not the store's (a handler bug) is logged and acknowledged.
    const { store } = f.service;
    const original = store.follows.bind(store);
    store.follows = async () => {
      throw new TypeError("handler bug");
    };
    try {
      const ok = await f.webhook(f.message(302, "/list"));
      expect([ok.status, await ok.text()]).toEqual([200, "ok"]);
    } finally {
      store.follows = original;
    }
  });

  it("without botInfo the bot asks getMe once on the local Bot API server, then handles updates", async () => {
    const service = createTelegramService({ sql: f.sql, token: TEST_BOT_TOKEN, apiRoot: f.botApi.apiRoot });
    const before = f.botApi.callsOf("getMe").length;
    await service.handleUpdate(f.message(303, "/help") as never, { build: null, wallNow: f.now() });
    await service.handleUpdate(f.message(303, "/help") as never, { build: null, wallNow: f.now() });
    await service.settled();
    expect(f.botApi.callsOf("getMe").length).toBe(before + 1);
    expect(repliesTo(303)).toHaveLength(2);
  });
});

/** A loopback port nothing listens on (a throwaway listener's, closed). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

/** An app whose webhook reaches `service` (the fixture's coin list, key store and secret). */
const appFor = (service: ReturnType<typeof createTelegramService>) =>
  createApp({
    store: coinListStore(Date.now),
    keys: f.keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "wall",
    webhookSecret: WEBHOOK_SECRET,
    services: { telegram: service },
  });
const post = (app: ReturnType<typeof createApp>, update: unknown) =>
  app.request("/api/telegram-webhook", {
    method: "POST",
    headers: { "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET },
    body: JSON.stringify(update),
  });

// Liveness bounds below are generous against a Bot API that never answers: before these changes the
// webhook waited on getMe, retried forever by grammY, or on each reply (10 s), so it never answered
// within them; now it answers within about IDENTITY_WAIT_MS (2 s).
describe("webhook with the Bot API down or hanging (no request waits on it)", () => {
  it("Bot API root on a closed port: ok at once; the update is handled once getMe answers", async () => {
    const port = await closedPort();
    const service = createTelegramService({
      sql: f.sql,
      token: TEST_BOT_TOKEN,
      apiRoot: `http://127.0.0.1:${port}`,
      identityRetryMs: 50,
    });
    const t0 = Date.now();
    const res = await post(appFor(service), f.message(401, "/follow USDT"));
    expect([res.status, await res.text()]).toEqual([200, "ok"]);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const back = await startBotApiServer(port);
    try {
      await service.settled();
      expect(await follows(401)).toEqual([{ kind: "coin", target: "usdt-tether" }]);
      expect(back.callsOf("getMe")).not.toHaveLength(0);
      expect(back.callsOf("sendMessage").map((c) => String(c.params.chat_id))).toEqual(["401"]);
    } finally {
      await back.close();
    }
  });

  it("Bot API that accepts and never answers getMe: ok within seconds, handled once it answers", async () => {
    const api = await startBotApiServer();
    api.hang = true;
    try {
      const service = createTelegramService({
        sql: f.sql,
        token: TEST_BOT_TOKEN,
        apiRoot: api.apiRoot,
        identityTimeoutMs: 60_000, // a getMe that hangs for a minute
      });
      const t0 = Date.now();
      const res = await post(appFor(service), f.message(402, "/follow USDC"));
      expect([res.status, await res.text()]).toEqual([200, "ok"]);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(api.hanging()).toBe(1); // the getMe still waits
      expect(await follows(402)).toEqual([]);
      api.hang = false; // the held getMe is answered
      await service.settled();
      expect(await follows(402)).toEqual([{ kind: "coin", target: "usdc-circle" }]);
      expect(api.callsOf("sendMessage").map((c) => String(c.params.chat_id))).toEqual(["402"]);
    } finally {
      await api.close();
    }
  });

  it("a reply the Bot API never answers does not hold the webhook: ok with the state stored, the reply still in flight", async () => {
    f.botApi.hang = true;
    try {
      const res = await post(f.app, f.message(403, "/follow DAI"));
      expect([res.status, await res.text()]).toEqual([200, "ok"]);
      expect(await follows(403)).toEqual([{ kind: "coin", target: "dai-sky" }]);
      // The reply reached the Bot API and is still unanswered: the answer did not wait for it (a
      // webhook that waited for the reply answers only once the client gave up, closing the call;
      // the pause lets such a close reach the server).
      await new Promise((r) => setTimeout(r, 100));
      expect(f.botApi.hanging()).toBe(1);
    } finally {
      f.botApi.hang = false;
    }
    await f.service.settled();
    expect(String(lastReplyTo(403).params.text)).toContain("Following DAI");
  });
});
