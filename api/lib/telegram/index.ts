import { type Api, BotError } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import { HttpError, notYetAvailable } from "../http-error.ts";
import type { SqlClient } from "../key-store.ts";
import { apiLog, errorMessage } from "../log.ts";
import { createBot } from "./bot.ts";
import { SerialQueue } from "./serial-queue.ts";
import { coinCatalog, PRESETS, presetNamed } from "./coins.ts";
import { verifyInitData } from "./init-data.ts";
import type { MiniAppMutation, MiniAppState } from "./mini-app.ts";
import { computePulse, liveSnapshot } from "./pulse.ts";
import type {
  DispatchSource,
  DispatchStatus,
  RequestScope,
  TelegramService,
  TelegramSummary,
  TelegramUpdate,
} from "./service.ts";
import { UNKNOWN_DISPATCH_STATUS } from "./service.ts";
import { TelegramStore, TelegramStoreError } from "./store.ts";

export { TelegramStore, TelegramStoreError } from "./store.ts";
export type { DispatchSource, DispatchStatus, FollowerLookup, TelegramService, TelegramSummary } from "./service.ts";

/** Default max age (s) of init data for a mini-app session: 24 h. */
export const DEFAULT_MINI_APP_SESSION_MAX_AGE_SEC = 86400;
/** Default max age (s) of init data for a mini-app mutation: 1 h (a write; the mini-app reopens to renew). */
export const DEFAULT_MINI_APP_MUTATE_MAX_AGE_SEC = 3600;
/** Replay claims are kept this long past the mutation max age (s) before pruning. */
const REPLAY_CLAIM_MARGIN_SEC = 3600;
/** Launches and lifecycle events are kept this long (s); snapshots forever. */
const HISTORY_RETENTION_SEC = 35 * 86400;

/** Settings of {@link createTelegramService}. */
export interface TelegramServiceOptions {
  /** The state store (the key store's client: `keys.sqlClient`). */
  sql: SqlClient;
  /** Bot token (`TELEGRAM_BOT_TOKEN`): the Bot API credential and the init-data HMAC key. */
  token: string;
  /** Bot API root; default `https://api.telegram.org` (tests: a local server). */
  apiRoot?: string;
  /** Bot identity; absent: `getMe` in the background on the first update (see `handleUpdate`). */
  botInfo?: UserFromGetMe;
  /** Deadline of one `getMe` (ms); default 5000. */
  identityTimeoutMs?: number;
  /** Pause between two failed `getMe` while updates wait for the identity (ms); default 30000. */
  identityRetryMs?: number;
  /** Max age (s) of init data for `/session`; default 86400. */
  miniAppMaxAgeSec?: number;
  /** Max age (s) of init data for `/mutate`; default 3600. */
  miniAppMutateMaxAgeSec?: number;
  /** The alert dispatcher's state (health's `telegramSummary`, the pulse's `pendingDeliveries`); absent: unknown. */
  dispatch?: DispatchSource;
}

/** Longest a webhook request waits for the bot's identity before its update is queued (ms). */
const IDENTITY_WAIT_MS = 2000;
/** Most updates waiting for the bot's identity; one more is dropped with a log line. */
const MAX_WAITING_UPDATES = 100;

/** grammY's AbortSignal type (its fetch shim's); Node's native signal works at run time. */
type GrammySignal = Parameters<Api["getMe"]>[0];

/** Resolves after `ms` (a timer that does not keep the process alive). */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

const storeDown = () => new HttpError(503, "Bot state store temporarily unavailable", { "Retry-After": "60" });

/** Runs `f`, turning a state-store failure into 503 (logged). */
async function guarded<T>(what: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof TelegramStoreError) {
      apiLog("error", "telegram", `${what}: state store unavailable`, { error: errorMessage(err.cause) });
      throw storeDown();
    }
    throw err;
  }
}

/**
 * The bot service: grammY bot, state-store tables, mini-app, adoption snapshot, pulse and health
 * summary (see TelegramService), plus its store and Bot API client (the alert dispatcher sends with it). Creates nothing until first used (tables on the first store call,
 * `getMe` on the first update when `botInfo` is absent).
 *
 * No webhook request waits on the Bot API: replies are queued (bot.ts); while the bot's identity is
 * unknown an update waits at most 2 s for `getMe` (deadline `identityTimeoutMs`), then it is queued
 * (at most 100, in order; more are dropped with a log line) and acknowledged, and handled once a
 * retried `getMe` answers (a state-store failure then drops it with a log line: Telegram no longer
 * retries it).
 */
export function createTelegramService(opts: TelegramServiceOptions): TelegramService & {
  store: TelegramStore;
  api: Api;
  /** Resolves once every queued update was handled and every queued reply sent or given up (tests, shutdown). */
  settled(): Promise<void>;
} {
  const store = new TelegramStore(opts.sql);
  const chat = createBot({ token: opts.token, store, apiRoot: opts.apiRoot, botInfo: opts.botInfo });
  const sessionMaxAge = opts.miniAppMaxAgeSec ?? DEFAULT_MINI_APP_SESSION_MAX_AGE_SEC;
  const mutateMaxAge = opts.miniAppMutateMaxAgeSec ?? DEFAULT_MINI_APP_MUTATE_MAX_AGE_SEC;
  // The bot's identity (`getMe`): fetched in the background with a deadline, one fetch at a time.
  let identity: Promise<void> | null = null;
  const fetchIdentity = () =>
    (identity ??= chat.bot.api.getMe(AbortSignal.timeout(opts.identityTimeoutMs ?? 5000) as GrammySignal).then(
      (me) => {
        chat.bot.botInfo = me;
      },
      (err: unknown) => {
        identity = null;
        apiLog("warn", "telegram", "bot identity unavailable (getMe failed); updates wait for it", {
          error: errorMessage(err),
        });
        throw err;
      },
    ));
  /** Resolves once the identity is known, retrying `getMe` every `identityRetryMs`. */
  const identityKnown = async () => {
    while (!chat.bot.isInited()) await fetchIdentity().catch(() => pause(opts.identityRetryMs ?? 30_000));
  };
  // Updates that arrived before the identity was known, handled in order once it is.
  const waitingUpdates = new SerialQueue(MAX_WAITING_UPDATES, "queued update");

  /** Handles an update now: coin catalog, grammY, state-store failures as 503 (logged). */
  const handleNow = async (update: TelegramUpdate, scope: RequestScope) => {
    const catalog = await coinCatalog(scope.build);
    try {
      await chat.handle(update as unknown as Update, { catalog, now: scope.wallNow });
    } catch (err) {
      const cause = err instanceof BotError ? err.error : err;
      if (cause instanceof TelegramStoreError) {
        apiLog("error", "telegram", "update not stored: state store unavailable; Telegram will retry it", {
          updateId: update.update_id,
          error: errorMessage(cause.cause),
        });
        throw storeDown();
      }
      // Understood but failed (a handler bug): logged and acknowledged, so Telegram does not retry it forever.
      apiLog("error", "telegram", "update handler failed; acknowledged", {
        updateId: update.update_id,
        error: errorMessage(cause),
      });
    }
  };

  /** Verifies init data; a refusal counts as denied (the only write before verification: a counter holding no request data). */
  const verify = async (initData: string, wallNow: number, maxAge: number) => {
    try {
      return verifyInitData(initData, opts.token, wallNow, maxAge);
    } catch (err) {
      await recordDenied(wallNow);
      throw err;
    }
  };
  const recordDenied = async (wallNow: number) => {
    try {
      await store.bump("mini_app_denied", wallNow);
    } catch (err) {
      apiLog("warn", "telegram", "denied counter not recorded", { error: errorMessage(err) });
    }
  };

  const state = async (
    userId: string,
    catalog: Awaited<ReturnType<typeof coinCatalog>>,
    authDate: number,
  ): Promise<MiniAppState> => {
    const c = await store.chat(userId);
    const f = await store.follows(userId);
    return {
      chatId: userId,
      active: c?.active ?? false,
      inactiveReason: c?.inactiveReason ?? null,
      coins: f.coins.map((id) => ({ id, symbol: catalog.symbolOf(id) })),
      presets: f.presets,
      availablePresets: PRESETS.map((p) => ({
        name: p.name,
        description: p.description,
        coins: p.coins === "*" ? "*" : [...p.coins],
      })),
      mutateUntil: authDate + mutateMaxAge,
    };
  };

  return {
    store,
    followers: store,
    api: chat.bot.api,

    async handleUpdate(update, scope) {
      if (!chat.bot.isInited() && !waitingUpdates.busy) {
        // The first update (or the first after a failed getMe): wait briefly for the identity.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          fetchIdentity().catch(() => undefined),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, IDENTITY_WAIT_MS);
          }),
        ]);
        clearTimeout(timer);
      }
      if (chat.bot.isInited() && !waitingUpdates.busy) return handleNow(update, scope);
      // The Bot API does not tell who the bot is yet: acknowledge now, handle once it does (in order).
      const queued = waitingUpdates.push(async () => {
        await identityKnown();
        await handleNow(update, scope).catch((err: unknown) => {
          apiLog("error", "telegram", "queued update dropped", {
            updateId: update.update_id,
            error: errorMessage(err),
          });
        });
      });
      if (!queued)
        apiLog("error", "telegram", "update dropped: too many updates wait for the bot identity", {
          updateId: update.update_id,
        });
    },

    async settled() {
      await waitingUpdates.idle();
      await chat.repliesSent();
    },

    async miniAppSession(body, scope) {
      const v = await verify(body.initData, scope.wallNow, sessionMaxAge);
      return guarded("mini-app session", async () => {
        const catalog = await coinCatalog(scope.build);
        await store.openLaunch(v.hash, v.userId, scope.wallNow);
        return state(v.userId, catalog, v.authDate);
      });
    },

    async miniAppMutate(body, scope): Promise<MiniAppMutation> {
      const v = await verify(body.initData, scope.wallNow, mutateMaxAge);
      const catalog = await coinCatalog(scope.build);
      let target: { coin: string } | { preset: string };
      if (body.coin !== undefined) {
        const id = body.coin.toLowerCase();
        if (!catalog.get(id)) {
          // Unfollowing a coin the list no longer carries is allowed; anything else needs the list.
          const followed =
            body.action === "unfollow" &&
            (await guarded("mini-app mutate", () => store.follows(v.userId))).coins.includes(id);
          if (!followed) {
            if (catalog.size === 0) throw notYetAvailable("stablecoins");
            throw new HttpError(404, `Unknown stablecoin id: ${body.coin}`);
          }
        }
        target = { coin: id };
      } else {
        // The body schema requires exactly one of coin or preset.
        const p = body.preset === undefined ? undefined : presetNamed(body.preset);
        if (!p)
          throw new HttpError(
            404,
            `Unknown preset: ${body.preset} (presets: ${PRESETS.map((x) => x.name).join(", ")})`,
          );
        target = { preset: p.name };
      }
      return guarded("mini-app mutate", async () => {
        if (!(await store.claimRequest(v.hash, body.requestId, scope.wallNow))) {
          await store.bump("mini_app_replay_claims", scope.wallNow);
          throw new HttpError(
            409,
            "Replayed mutation: this requestId was already used with this init data",
            {},
            { reason: "init_data_replayed" },
          );
        }
        let changed: boolean;
        try {
          const [kind, value] =
            "coin" in target ? (["coin", target.coin] as const) : (["preset", target.preset] as const);
          if (body.action === "follow") {
            await store.activate(v.userId, "private", scope.wallNow, { unlessBlocked: true });
            changed = (await store.follow(v.userId, kind, [value], scope.wallNow)) > 0;
          } else {
            changed = (await store.unfollow(v.userId, kind, [value])) > 0;
          }
          await store.bump("mini_app_mutations", scope.wallNow);
          await store.markFirstMutation(v.hash, scope.wallNow);
        } catch (err) {
          await store.releaseRequest(v.hash, body.requestId).catch(() => undefined);
          throw err;
        }
        return { ...(await state(v.userId, catalog, v.authDate)), action: body.action, target, changed };
      });
    },

    recordDenied,

    async recordAdoption(scope) {
      return guarded("adoption snapshot", async () => {
        const catalog = await coinCatalog(scope.build);
        const { topCoins: _top, ...snapshot } = await liveSnapshot(store, catalog, scope.wallNow);
        await store.saveSnapshot(snapshot);
        await store.prune(
          scope.wallNow - mutateMaxAge - REPLAY_CLAIM_MARGIN_SEC,
          scope.wallNow - HISTORY_RETENTION_SEC,
        );
        return snapshot;
      });
    },

    async pulse(scope) {
      return guarded("pulse", async () =>
        computePulse(store, await coinCatalog(scope.build), opts.dispatch, scope.wallNow),
      );
    },

    async summary(): Promise<TelegramSummary> {
      const totalChats = await store.totalChats();
      let dispatch: DispatchStatus = UNKNOWN_DISPATCH_STATUS;
      if (opts.dispatch) {
        try {
          dispatch = await opts.dispatch.status();
        } catch (err) {
          apiLog("warn", "telegram", "dispatch status unavailable for health", { error: errorMessage(err) });
        }
      }
      return { totalChats, ...dispatch };
    },
  };
}
