import { type Api, BotError } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import { HttpError, notYetAvailable } from "../http-error.ts";
import type { SqlClient } from "../key-store.ts";
import { apiLog, errorMessage } from "../log.ts";
import { type ChatBot, createBot } from "./bot.ts";
import { SerialQueue } from "./serial-queue.ts";
import { type CoinCatalog, coinCatalog, PRESETS, presetNamed } from "./coins.ts";
import { type VerifiedInitData, verifyInitData } from "./init-data.ts";
import type { MiniAppMutateBody, MiniAppMutation, MiniAppState } from "./mini-app.ts";
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
 * The bot's identity (`getMe`) for `chat`: `fetch` starts one fetch (deadline `identityTimeoutMs`,
 * default 5000 ms) unless one runs, and rejects when it fails (logged; the next call fetches again);
 * `known` resolves once the bot is inited, retrying every `identityRetryMs` (default 30000 ms).
 */
function botIdentity(
  chat: ChatBot,
  opts: Pick<TelegramServiceOptions, "identityTimeoutMs" | "identityRetryMs">,
): { fetch(): Promise<void>; known(): Promise<void> } {
  let identity: Promise<void> | null = null;
  const fetch = () =>
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
  const known = async () => {
    while (!chat.bot.isInited()) await fetch().catch(() => pause(opts.identityRetryMs ?? 30_000));
  };
  return { fetch, known };
}

/**
 * Handles an update now: the build's coin catalog, then grammY. A handler's other failure is logged
 * and acknowledged (Telegram would retry it forever).
 * @throws HttpError 503 when the state store failed (logged; Telegram retries the update).
 */
async function handleNow(chat: ChatBot, update: TelegramUpdate, scope: RequestScope): Promise<void> {
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
}

/**
 * The webhook side of the service (see `createTelegramService`): `handleUpdate` handles an update now
 * once the identity is known, else waits for it at most IDENTITY_WAIT_MS, then queues the update (at
 * most MAX_WAITING_UPDATES, in order; more are dropped with a log line); `settled` resolves once every
 * queued update was handled and every queued reply sent or given up.
 */
function updateHandling(
  chat: ChatBot,
  opts: TelegramServiceOptions,
): Pick<TelegramService, "handleUpdate"> & { settled(): Promise<void> } {
  const identity = botIdentity(chat, opts);
  // Updates that arrived before the identity was known, handled in order once it is.
  const waitingUpdates = new SerialQueue(MAX_WAITING_UPDATES, "queued update");
  return {
    async handleUpdate(update, scope) {
      if (!chat.bot.isInited() && !waitingUpdates.busy) {
        // The first update (or the first after a failed getMe): wait briefly for the identity.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          identity.fetch().catch(() => undefined),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, IDENTITY_WAIT_MS);
          }),
        ]);
        clearTimeout(timer);
      }
      if (chat.bot.isInited() && !waitingUpdates.busy) return handleNow(chat, update, scope);
      // The Bot API does not tell who the bot is yet: acknowledge now, handle once it does (in order).
      const queued = waitingUpdates.push(async () => {
        await identity.known();
        await handleNow(chat, update, scope).catch((err: unknown) => {
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
  };
}

/** Mini-app state of the private chat `userId`: follows (coin symbols from `catalog`), presets on offer, mutations accepted until `authDate + mutateMaxAge`. */
async function miniAppState(
  store: TelegramStore,
  userId: string,
  catalog: CoinCatalog,
  authDate: number,
  mutateMaxAge: number,
): Promise<MiniAppState> {
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
}

/**
 * What a mutation targets: a coin of the catalog (or, to unfollow, one `userId` follows that the list
 * no longer carries), else a preset by name.
 * @throws HttpError 404 unknown coin or preset; 503 (`notYetAvailable`) while the coin list is empty;
 * 503 store unavailable.
 */
async function mutationTarget(
  store: TelegramStore,
  body: MiniAppMutateBody,
  catalog: CoinCatalog,
  userId: string,
): Promise<MiniAppMutation["target"]> {
  if (body.coin !== undefined) {
    const id = body.coin.toLowerCase();
    if (!catalog.get(id)) {
      // Unfollowing a coin the list no longer carries is allowed; anything else needs the list.
      const followed =
        body.action === "unfollow" &&
        (await guarded("mini-app mutate", () => store.follows(userId))).coins.includes(id);
      if (!followed) {
        if (catalog.size === 0) throw notYetAvailable("stablecoins");
        throw new HttpError(404, `Unknown stablecoin id: ${body.coin}`);
      }
    }
    return { coin: id };
  }
  // The body schema requires exactly one of coin or preset.
  const p = body.preset === undefined ? undefined : presetNamed(body.preset);
  if (!p)
    throw new HttpError(404, `Unknown preset: ${body.preset} (presets: ${PRESETS.map((x) => x.name).join(", ")})`);
  return { preset: p.name };
}

/**
 * Applies a verified mutation once per (init data, requestId): follows (opting the chat in unless it
 * blocked the bot) or unfollows `target`, counts it and marks the launch's first mutation; a failure
 * releases the request id. Whether anything changed.
 * @throws HttpError 409 (`init_data_replayed`) for a reused requestId; the store's errors.
 */
async function applyMutation(
  store: TelegramStore,
  v: VerifiedInitData,
  body: MiniAppMutateBody,
  target: MiniAppMutation["target"],
  wallNow: number,
): Promise<boolean> {
  if (!(await store.claimRequest(v.hash, body.requestId, wallNow))) {
    await store.bump("mini_app_replay_claims", wallNow);
    throw new HttpError(
      409,
      "Replayed mutation: this requestId was already used with this init data",
      {},
      { reason: "init_data_replayed" },
    );
  }
  try {
    const [kind, value] = "coin" in target ? (["coin", target.coin] as const) : (["preset", target.preset] as const);
    let changed: boolean;
    if (body.action === "follow") {
      await store.activate(v.userId, "private", wallNow, { unlessBlocked: true });
      changed = (await store.follow(v.userId, kind, [value], wallNow)) > 0;
    } else {
      changed = (await store.unfollow(v.userId, kind, [value])) > 0;
    }
    await store.bump("mini_app_mutations", wallNow);
    await store.markFirstMutation(v.hash, wallNow);
    return changed;
  } catch (err) {
    await store.releaseRequest(v.hash, body.requestId).catch(() => undefined);
    throw err;
  }
}

/**
 * The mini-app side of the service: session and mutation over verified init data (max ages
 * `miniAppMaxAgeSec`, `miniAppMutateMaxAgeSec`), and the denied counter.
 */
function miniApp(
  store: TelegramStore,
  opts: TelegramServiceOptions,
): Pick<TelegramService, "miniAppSession" | "miniAppMutate" | "recordDenied"> {
  const sessionMaxAge = opts.miniAppMaxAgeSec ?? DEFAULT_MINI_APP_SESSION_MAX_AGE_SEC;
  const mutateMaxAge = opts.miniAppMutateMaxAgeSec ?? DEFAULT_MINI_APP_MUTATE_MAX_AGE_SEC;
  const recordDenied = async (wallNow: number) => {
    try {
      await store.bump("mini_app_denied", wallNow);
    } catch (err) {
      apiLog("warn", "telegram", "denied counter not recorded", { error: errorMessage(err) });
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
  return {
    async miniAppSession(body, scope) {
      const v = await verify(body.initData, scope.wallNow, sessionMaxAge);
      return guarded("mini-app session", async () => {
        const catalog = await coinCatalog(scope.build);
        await store.openLaunch(v.hash, v.userId, scope.wallNow);
        return miniAppState(store, v.userId, catalog, v.authDate, mutateMaxAge);
      });
    },

    async miniAppMutate(body, scope): Promise<MiniAppMutation> {
      const v = await verify(body.initData, scope.wallNow, mutateMaxAge);
      const catalog = await coinCatalog(scope.build);
      const target = await mutationTarget(store, body, catalog, v.userId);
      return guarded("mini-app mutate", async () => {
        const changed = await applyMutation(store, v, body, target, scope.wallNow);
        return {
          ...(await miniAppState(store, v.userId, catalog, v.authDate, mutateMaxAge)),
          action: body.action,
          target,
          changed,
        };
      });
    },

    recordDenied,
  };
}

/**
 * The reporting side of the service: adoption snapshots (pruning replay claims past the mutation max
 * age plus REPLAY_CLAIM_MARGIN_SEC and history past HISTORY_RETENTION_SEC), the pulse, the health summary.
 */
function reports(
  store: TelegramStore,
  opts: TelegramServiceOptions,
): Pick<TelegramService, "recordAdoption" | "pulse" | "summary"> {
  const mutateMaxAge = opts.miniAppMutateMaxAgeSec ?? DEFAULT_MINI_APP_MUTATE_MAX_AGE_SEC;
  return {
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
  return {
    store,
    followers: store,
    api: chat.bot.api,
    ...updateHandling(chat, opts),
    ...miniApp(store, opts),
    ...reports(store, opts),
  };
}
