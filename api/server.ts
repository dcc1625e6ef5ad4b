import { getRequestListener } from "@hono/node-server";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join, resolve } from "node:path";
import { createNodeListener } from "./app.ts";
import { parseTrustedProxies } from "./lib/client-address.ts";
import { type ApiConfig, loadApiConfig } from "./config.ts";
import { applyHeapGrowingPercent } from "../lib/heap-growth.ts";
import type { DonorClaimConfig } from "./lib/donor-claims.ts";
import { FeedbackStore } from "./lib/feedback.ts";
import type { AlertDispatcher } from "./lib/telegram/dispatch.ts";
import { acquireEmbeddedLock, type EmbeddedLock, EmbeddedStoreBusyError } from "./lib/embedded-store.ts";
import { devKeyPath, developmentKey } from "./lib/dev-key.ts";
import { adminSocketPath, startKeyAdminSocket } from "./lib/key-admin.ts";
import { type JobExecutor, JobRunner } from "./lib/jobs.ts";
import {
  type KeyStore,
  type KeyStoreStatus,
  openKeyStore,
  openSqlClient,
  StateStoreUnavailableError,
} from "./lib/key-store.ts";
import { apiLog, errorMessage } from "./lib/log.ts";
import { MaintenanceGate } from "./lib/maintenance.ts";
import { keepTickShapeAlive } from "./lib/tick-shape.ts";
import { type OperatorAccessConfig, OperatorAuth } from "./lib/ops-access.ts";
import { createOpsApp } from "./ops-app.ts";
import { type ObjectReader, PublishedStore } from "./lib/published.ts";
import { KeyRateLimiter, openRedis } from "./lib/rate-limit.ts";
import { openStorageReader, type StorageReader } from "./lib/storage.ts";
import { StatusHistoryStore, StatusRecorder } from "./lib/status-history.ts";
import { statusObserver } from "./routes/health.ts";
import type { RouteServices } from "./routes/route.ts";

/** Config of `startServer`: the parsed env config (`loadApiConfig`); fields with defaults may be left out. */
export type ServerConfig = Pick<ApiConfig, "PORT" | "HOST" | "BALLAST_DATA_DIR" | "CLOCK"> & Partial<ApiConfig>;

/** Options of `startServer`. */
export interface StartServerOptions {
  /**
   * Provide a `standard` development key and return its token as `devKey`: the one kept for this state
   * store under `<BALLAST_DATA_DIR>/state/` (api/lib/dev-key.ts `devKeyPath`, mode 0600) while it still
   * verifies, else a new one (written there).
   */
  devKey?: boolean;
  /** Requests per minute of the development key; default `config.DEV_KEY_RATE_LIMIT`, else 120. */
  devKeyLimitPerMinute?: number;
  /** Runs operator jobs instead of child processes of the pipeline CLIs (tests). */
  jobExecutor?: JobExecutor;
}

/** The operator lane's access settings from the config (comma lists split and trimmed). */
export function operatorAccessConfig(config: Partial<ApiConfig>): OperatorAccessConfig {
  const list = (v: string | undefined) =>
    v
      ?.split(",")
      .map((x) => x.trim())
      .filter(Boolean) ?? [];
  return {
    jwksUrl: config.OPS_ACCESS_JWKS_URL,
    audiences: list(config.OPS_ACCESS_AUD),
    issuer: config.OPS_ACCESS_ISSUER,
    serviceTokenId: config.OPS_SERVICE_TOKEN_ID,
    serviceTokenSecret: config.OPS_SERVICE_TOKEN_SECRET,
    allowedOrigins: list(config.OPS_ALLOWED_ORIGINS),
  };
}

/** Donor-claim settings from the config: domain default `127.0.0.1:<PORT>`, URI default `http://<domain>/api/`. */
export function donorClaimConfig(config: Partial<ApiConfig> & Pick<ApiConfig, "PORT">): DonorClaimConfig {
  const domain = config.DONOR_CLAIM_DOMAIN ?? `127.0.0.1:${config.PORT}`;
  return {
    open: config.DONOR_CLAIMS_OPEN ?? true,
    domain,
    uri: config.DONOR_CLAIM_URI ?? `http://${domain}/api/`,
    chainId: config.DONOR_CLAIM_CHAIN_ID ?? 1,
    rpcUrl: config.DONOR_CLAIM_RPC_URL,
  };
}

/**
 * The messaging bot when `TELEGRAM_BOT_TOKEN` is set: the bot service (routes, health) and its alert
 * dispatcher, run every `TELEGRAM_ALERTS_INTERVAL_SEC` (0: never) over the serving build. On Postgres
 * the dispatcher has its own small pool (the key store's statements time out after 300 ms); PGlite is
 * shared. Null without a token. `close` stops the loop and that pool.
 */
async function startBot(
  config: ServerConfig,
  keys: KeyStore,
  store: PublishedStore,
  read: ObjectReader,
  clockMode: ServerConfig["CLOCK"],
) {
  if (!config.TELEGRAM_BOT_TOKEN) return null;
  // Loaded only with a bot: grammY and the dispatcher are not paid for by a server without one.
  const [{ createTelegramService }, { AlertDispatcher, startAlertLoop }] = await Promise.all([
    import("./lib/telegram/index.ts"),
    import("./lib/telegram/dispatch.ts"),
  ]);
  let dispatcher: AlertDispatcher | undefined;
  const telegram = createTelegramService({
    sql: keys.sqlClient,
    token: config.TELEGRAM_BOT_TOKEN,
    apiRoot: config.TELEGRAM_API_ROOT,
    miniAppMaxAgeSec: config.TELEGRAM_MINI_APP_MAX_AGE_SEC,
    miniAppMutateMaxAgeSec: config.TELEGRAM_MINI_APP_MUTATE_MAX_AGE_SEC,
    dispatch: { status: () => (dispatcher ? dispatcher.status() : Promise.reject(new Error("alert dispatch off"))) },
  });
  const interval = config.TELEGRAM_ALERTS_INTERVAL_SEC ?? 60;
  if (interval === 0) return { telegram, close: async () => undefined };
  const alertSql = config.DATABASE_URL
    ? await openSqlClient({
        databaseUrl: config.DATABASE_URL,
        pgliteDir: "",
        applicationName: `${config.PGAPPNAME ?? "ballast-api"}-alerts`,
        queryTimeoutMs: 5000,
        connectTimeoutMs: 2000,
        maxConnections: 2,
      })
    : keys.sqlClient;
  dispatcher = new AlertDispatcher({
    sql: alertSql,
    read,
    api: telegram.api,
    followers: telegram.followers,
    clockMode,
    alerts: { largeFreezeMinUsd: config.TELEGRAM_ALERT_FREEZE_MIN_USD, linkBase: config.TELEGRAM_ALERT_LINK_BASE },
    onChatGone: (chatId) =>
      telegram.store.deactivate(chatId, "blocked", Math.floor(Date.now() / 1000)).then(() => undefined),
  });
  const loop = startAlertLoop(dispatcher, () => store.build(), interval * 1000);
  return {
    telegram,
    close: async () => {
      await loop.stop();
      if (alertSql !== keys.sqlClient) await alertSql.close();
    },
  };
}

/**
 * `http://<host>:<port>` of a listener, for the descriptions it serves: a wildcard host (`0.0.0.0`, `::`,
 * empty) becomes 127.0.0.1, an IPv6 literal is bracketed.
 */
export function listeningOrigin(host: string, port: number): string {
  const h = host === "" || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return `http://${h.includes(":") ? `[${h}]` : h}:${port}`;
}

/** Listens on `port`/`host`, resolving once listening. @throws the listen error (port taken). */
async function listen(server: Server, port: number, host: string): Promise<void> {
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** A listening API server and the handles behind it. */
export interface RunningServer {
  server: Server;
  /** Port actually listened on (a free one when `config.PORT` is 0). */
  port: number;
  /** Plaintext development key when requested and the state store was reachable. */
  devKey?: string;
  /** Whether `devKey` was reused from the state dir (false: minted now). */
  devKeyReused?: boolean;
  /** Unix socket of local key administration (embedded store only; see api/lib/key-admin.ts). */
  adminSocket?: string;
  /** Why a requested development key was not created (state store unavailable). */
  devKeyError?: string;
  keys: KeyStore;
  limiter: KeyRateLimiter;
  /** Status history recorder of this process (every `STATUS_RECORD_INTERVAL_SEC`, default 60 s; stopped by `close`). */
  statusRecorder: StatusRecorder;
  /**
   * State store health as /api/health reports it: `keys.status()` (state, circuit, backend, generic
   * reason, `lastOkAt` Unix s); while `unavailable`, a call also starts a background probe
   * (`keys.check()`, a half-open probe of the breaker, at most every 5 s).
   */
  stateStatus(): KeyStoreStatus;
  /**
   * Operator listener (spec 4.5) on `OPS_HOST:OPS_PORT`, and its port; absent when no operator access
   * (JWT setting or service token) is configured.
   */
  opsServer?: Server;
  opsPort?: number;
  /** Maintenance switch of this process (shared by both listeners). */
  maintenance: MaintenanceGate;
  /** Stops listening (both listeners), the admin socket, operator jobs and the status recorder, then closes the state store and Redis and releases the embedded store; idempotent, never throws. */
  close(): Promise<void>;
}

/** Bytes in `n` MiB (whole bytes). */
const mib = (n: number) => Math.floor(n * 1024 * 1024);

/** Longest wait (ms) of a request for a pointer re-check on object storage once a build serves (PublishedStoreOptions.maxRefreshWaitMs). */
const MAX_REFRESH_WAIT_MS = 250;

/** The stores a server opens before anything else (`openStores`); closed by `closeStores`. */
interface ServerStores {
  /** Published builds: the data dir or the shared bucket. */
  storage: StorageReader;
  /** Ownership of the embedded store's `<data>/state` (absent with DATABASE_URL). */
  lock?: EmbeddedLock;
  keys: KeyStore;
  /** Key administration socket (embedded store only). */
  admin?: Awaited<ReturnType<typeof startKeyAdminSocket>>;
  redis?: Awaited<ReturnType<typeof openRedis>>;
  limiter: KeyRateLimiter;
}

/**
 * Opens the published-storage reader, the state store (taking ownership of `<data>/state` and serving
 * key administration on its unix socket when embedded), Redis (when `REDIS_URL`) and the limiter.
 * A failed state store or admin socket releases what was taken before throwing.
 * @throws EmbeddedStoreBusyError when another live process owns the embedded store; the state store's
 * open error (e.g. the embedded PGlite cannot be opened); the admin socket's listen error.
 */
async function openStores(config: ServerConfig): Promise<ServerStores> {
  // Published builds: the local data dir, or a bucket shared by every instance (STORAGE_DRIVER=s3),
  // where a slow store never holds a request longer than MAX_REFRESH_WAIT_MS for a pointer re-check.
  const storage: StorageReader = await openStorageReader(config);
  const stateDir = join(config.BALLAST_DATA_DIR, "state");
  const lock: EmbeddedLock | undefined = config.DATABASE_URL ? undefined : acquireEmbeddedLock(stateDir, "server");
  let keys: KeyStore;
  try {
    keys = await openKeyStore({
      databaseUrl: config.DATABASE_URL,
      pepper: config.API_KEY_PEPPER,
      previousPepper: config.API_KEY_PEPPER_PREVIOUS,
      dataDir: config.BALLAST_DATA_DIR,
      applicationName: config.PGAPPNAME,
      timeoutMs: config.STATE_STORE_TIMEOUT_MS,
      cache: true,
      breaker: { coolDownMs: config.STATE_STORE_COOLDOWN_MS },
    });
  } catch (err) {
    lock?.release();
    throw err;
  }
  let admin: ServerStores["admin"];
  if (lock) {
    try {
      admin = await startKeyAdminSocket(keys, adminSocketPath(stateDir));
      lock.setSocket(admin.path);
    } catch (err) {
      await keys.close().catch(() => undefined);
      lock.release();
      throw err;
    }
  }
  const redis = config.REDIS_URL
    ? await openRedis(config.REDIS_URL, { timeoutMs: config.REDIS_TIMEOUT_MS })
    : undefined;
  const limiter = new KeyRateLimiter(redis, { timeoutMs: config.REDIS_TIMEOUT_MS });
  return { storage, lock, keys, admin, redis, limiter };
}

/**
 * The state store's status for health: `keys.status()`; while it is unavailable a call also probes it
 * (at most every 5 s, in the background) so the report heals without keyed traffic.
 */
function probingStateStatus(keys: KeyStore): () => KeyStoreStatus {
  let lastProbeMs = 0;
  return () => {
    const s = keys.status();
    if (s.state === "unavailable" && Date.now() - lastProbeMs > 5000) {
      lastProbeMs = Date.now();
      void keys.check();
    }
    return s;
  };
}

/** What the API serves from, over the opened stores (`startServices`). */
interface ServerServices {
  store: PublishedStore;
  stateStatus: () => KeyStoreStatus;
  services: RouteServices;
  /** Not started yet: `startServer` starts it once listening. */
  statusRecorder: StatusRecorder;
  bot: Awaited<ReturnType<typeof startBot>>;
  maintenance: MaintenanceGate;
}

/**
 * The published store (`POINTER_REFRESH_MS`, default 1000; `BUILD_CACHE_MIB`), the route services
 * (state and limiter status, status history, donor claims, feedback, the messaging bot when
 * configured) and the maintenance gate (refreshed once from the state store).
 */
async function startServices(config: ServerConfig, stores: ServerStores): Promise<ServerServices> {
  const { storage, keys, limiter } = stores;
  const store = new PublishedStore(storage.read, config.POINTER_REFRESH_MS ?? 1000, Date.now, {
    ...(storage.driver === "s3" ? { maxRefreshWaitMs: MAX_REFRESH_WAIT_MS } : {}),
    ...(config.BUILD_CACHE_MIB !== undefined ? { buildCacheBytes: mib(config.BUILD_CACHE_MIB) } : {}),
  });
  const stateStatus = probingStateStatus(keys);
  // Status history: the health this process observes, recorded on a timer into the state store.
  const services: RouteServices = {
    stateStore: stateStatus,
    limiterStore: () => limiter.status(),
    docsDir: join(config.BALLAST_DATA_DIR, "docs"),
  };
  const history = new StatusHistoryStore(keys.sqlClient);
  const clockMode = config.CLOCK;
  const statusRecorder = new StatusRecorder({
    history,
    observe: statusObserver({ store, clockMode, services }),
    intervalSec: config.STATUS_RECORD_INTERVAL_SEC ?? 60,
  });
  services.statusHistory = { store: history, recorder: () => statusRecorder.status() };
  services.donorClaims = { config: donorClaimConfig(config), keys, limiter };
  services.feedback = new FeedbackStore(keys.sqlClient, limiter);
  const bot = await startBot(config, keys, store, storage.read, clockMode);
  services.telegram = bot?.telegram;
  const maintenance = new MaintenanceGate(keys.sqlClient, { forced: config.MAINTENANCE_MODE === true });
  await maintenance.refresh();
  return { store, stateStatus, services, statusRecorder, bot, maintenance };
}

/** CORS origins of the public lane: `CORS_ORIGINS` (comma list), default the server's own `127.0.0.1`/`localhost` origins. */
function corsOrigins(config: ServerConfig): string[] {
  return (
    config.CORS_ORIGINS?.split(",")
      .map((s) => s.trim())
      .filter(Boolean) ?? [`http://127.0.0.1:${config.PORT}`, `http://localhost:${config.PORT}`]
  );
}

/** The public lane's Node request listener (api/app.ts `createNodeListener`) over the stores and services. */
function publicListener(config: ServerConfig, stores: ServerStores, app: ServerServices) {
  return createNodeListener({
    store: app.store,
    keys: stores.keys,
    limiter: stores.limiter,
    corsOrigins: corsOrigins(config),
    clockMode: config.CLOCK,
    services: app.services,
    maintenance: app.maintenance,
    trustedProxies: parseTrustedProxies(config.TRUSTED_PROXIES),
    ...(config.RESPONSE_CACHE_MIB !== undefined ? { responseCacheBytes: mib(config.RESPONSE_CACHE_MIB) } : {}),
    siteProxySecret: config.SITE_PROXY_SECRET,
    siteProxySecretPrevious: config.SITE_PROXY_SECRET_PREVIOUS,
    webhookSecret: config.TELEGRAM_WEBHOOK_SECRET,
  });
}

/**
 * The operator lane (spec 4.5) when operator access is configured (`operatorAccessConfig`): its job
 * runner (`opts.jobExecutor`, else child processes with `BALLAST_DATA_DIR`) and its HTTP server, not yet
 * listening. Both absent otherwise.
 */
function createOpsLane(
  config: ServerConfig,
  opts: StartServerOptions,
  keys: KeyStore,
  app: ServerServices,
): { jobs?: JobRunner; opsServer?: Server } {
  const opsAuth = new OperatorAuth(operatorAccessConfig(config));
  if (!opsAuth.configured) return {};
  const jobs = new JobRunner(keys.sqlClient, {
    executor: opts.jobExecutor,
    env: { ...process.env, BALLAST_DATA_DIR: config.BALLAST_DATA_DIR },
  });
  const opsServer = createServer(
    getRequestListener(
      createOpsApp({
        auth: opsAuth,
        keys,
        store: app.store,
        clockMode: config.CLOCK,
        maintenance: app.maintenance,
        jobs,
        dataDir: config.BALLAST_DATA_DIR,
        jobWaitMs: config.OPS_JOB_WAIT_MS,
        ledgerPath: resolve(config.BALLAST_ONCHAIN_LEDGER ?? join(config.BALLAST_DATA_DIR, "onchain.duckdb")),
      }).fetch,
    ),
  );
  return { jobs, opsServer };
}

/**
 * The development key when `opts.devKey` (api/lib/dev-key.ts `developmentKey`, limit
 * `opts.devKeyLimitPerMinute`, else `DEV_KEY_RATE_LIMIT`, else 120 per minute); with the state store
 * unavailable, `devKeyError` says why instead. Empty when not requested.
 * @throws what `developmentKey` throws other than StateStoreUnavailableError.
 */
async function provideDevKey(
  config: ServerConfig,
  opts: StartServerOptions,
  keys: KeyStore,
): Promise<Pick<RunningServer, "devKey" | "devKeyReused" | "devKeyError">> {
  if (!opts.devKey) return {};
  const limit = opts.devKeyLimitPerMinute ?? config.DEV_KEY_RATE_LIMIT ?? 120;
  try {
    const { token, reused } = await developmentKey(
      keys,
      devKeyPath(config.BALLAST_DATA_DIR, config.DATABASE_URL),
      limit,
    );
    return { devKey: token, devKeyReused: reused };
  } catch (err) {
    if (!(err instanceof StateStoreUnavailableError)) throw err;
    return { devKeyError: err.message };
  }
}

/**
 * Stops the bot, operator jobs, status recorder and admin socket, then closes the state store and Redis
 * (failures logged, never thrown), the storage reader, and releases the embedded store.
 */
async function closeStores(
  stores: ServerStores,
  app: Pick<ServerServices, "bot" | "statusRecorder">,
  jobs: JobRunner | undefined,
): Promise<void> {
  await app.bot?.close();
  await jobs?.close();
  await app.statusRecorder.stop();
  await stores.admin?.close();
  const results = await Promise.allSettled([stores.keys.close(), Promise.resolve(stores.redis?.disconnect())]);
  for (const r of results)
    if (r.status === "rejected") apiLog("warn", "api", "error while closing", { error: errorMessage(r.reason) });
  stores.storage.close();
  stores.lock?.release();
}

/**
 * The public lane's HTTP server over its request listener (not yet listening). Each connection's peer
 * address is read once it is accepted: Node caches it on the socket (`_peername`) when first read, and
 * read at different moments (the app's lane step, per-IP limits) it gave sockets three more hidden
 * classes than a server that never reads it, which made Node's own stream and HTTP functions
 * megamorphic for every request (~0.9 µs of CPU per cached answer here; docs/benchmarks.md).
 */
function createApiServer(listener: RequestListener): Server {
  return createServer(listener).on("connection", (socket: Socket) => void socket.remoteAddress);
}

/** Stops `s` listening (idle connections closed now); resolves once closed, at once when not listening. */
function stopListening(s: Server): Promise<void> {
  return new Promise<void>((r) => {
    if (!s.listening) return r();
    s.close(() => r());
    s.closeIdleConnections();
  });
}

/**
 * Listens on `PORT`/`HOST`, sets `services.publicOrigin` (`PUBLIC_BASE_URL` without trailing slashes,
 * else the listening origin), then the operator server on `OPS_PORT` (8788) / `OPS_HOST` (127.0.0.1).
 * @throws the first listen error (port taken).
 */
async function listenLanes(
  config: ServerConfig,
  server: Server,
  opsServer: Server | undefined,
  services: RouteServices,
) {
  await listen(server, config.PORT, config.HOST);
  services.publicOrigin =
    config.PUBLIC_BASE_URL?.replace(/\/+$/, "") ?? listeningOrigin(config.HOST, (server.address() as AddressInfo).port);
  if (opsServer) await listen(opsServer, config.OPS_PORT ?? 8788, config.OPS_HOST ?? "127.0.0.1");
}

/**
 * Opens the published-storage reader (`STORAGE_DRIVER`: the data dir, or an S3 bucket shared by
 * every instance: api/lib/storage.ts), the state store, limiter and published store, and starts listening. Starts even when
 * Postgres or Redis is down: health and static files are served, keyed requests answer 503
 * (`Retry-After: 60`) within the store/limiter deadlines (default 300 ms) until they are back.
 *
 * Embedded store (no DATABASE_URL): the server takes ownership of `<data>/state` (owner.json) and
 * serves key administration on a unix socket there, which `scripts/keys.ts` uses while it runs.
 * @throws EmbeddedStoreBusyError when another live process owns the embedded store; when the port
 * cannot be bound or the embedded PGlite cannot be opened.
 */
export async function startServer(config: ServerConfig, opts: StartServerOptions = {}): Promise<RunningServer> {
  // First: opening an embedded store for the first time runs enough full collections to spoil
  // nextTick's property cache before the server answers anything (keepTickShapeAlive).
  keepTickShapeAlive();
  const stores = await openStores(config);
  const app = await startServices(config, stores);
  const listener = publicListener(config, stores, app);
  const { jobs, opsServer } = createOpsLane(config, opts, stores.keys, app);
  const devKey = await provideDevKey(config, opts, stores.keys);

  let closed: Promise<void> | undefined;
  const server = createApiServer(listener);
  try {
    await listenLanes(config, server, opsServer, app.services);
  } catch (err) {
    await stopListening(server);
    await closeStores(stores, app, jobs);
    throw err;
  }
  app.statusRecorder.start();
  const close = () =>
    (closed ??= (async () => {
      await Promise.all([stopListening(server), ...(opsServer ? [stopListening(opsServer)] : [])]);
      await closeStores(stores, app, jobs);
    })());
  return {
    server,
    port: (server.address() as AddressInfo).port,
    ...devKey,
    adminSocket: stores.admin?.path,
    keys: stores.keys,
    limiter: stores.limiter,
    statusRecorder: app.statusRecorder,
    stateStatus: app.stateStatus,
    maintenance: app.maintenance,
    close,
    ...(opsServer ? { opsServer, opsPort: (opsServer.address() as AddressInfo).port } : {}),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = loadApiConfig();
  applyHeapGrowingPercent(config.HEAP_GROWING_PERCENT);
  const wantKey = process.argv.includes("--dev-key");
  let running: RunningServer;
  try {
    running = await startServer(config, { devKey: wantKey, devKeyLimitPerMinute: config.DEV_KEY_RATE_LIMIT });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
      process.stderr.write(
        `Error: port ${(err as { port?: number }).port ?? config.PORT} on ${config.HOST} is taken (another server?): stop it, or set PORT (make run PORT=<another port>).\n`,
      );
      process.exit(1);
    }
    if (!(err instanceof EmbeddedStoreBusyError)) throw err;
    process.stderr.write(
      `Error: ${err.message}; stop it first, or give each server its own BALLAST_DATA_DIR, or use DATABASE_URL (Postgres) for several instances.\n`,
    );
    process.exit(1);
  }
  const { devKey, devKeyReused, devKeyError, port, opsPort, close } = running;
  const base = `http://127.0.0.1:${port}`;
  process.stdout.write(
    opsPort !== undefined
      ? `Operator lane on http://${config.OPS_HOST}:${opsPort} (operator routes of spec 4.5; description at /openapi.json)\n`
      : "Operator lane off: set OPS_ACCESS_JWKS_URL + OPS_ACCESS_AUD + OPS_ACCESS_ISSUER, or OPS_SERVICE_TOKEN_ID + OPS_SERVICE_TOKEN_SECRET\n",
  );
  if (devKey) {
    process.stdout.write(
      `API key: ${devKey} (${devKeyReused ? "reused from" : "new, kept in"} ${devKeyPath(config.BALLAST_DATA_DIR, config.DATABASE_URL)})\n`,
    );
    process.stdout.write(`Listening on ${base}\n`);
    process.stdout.write(`curl -s -H 'X-API-Key: ${devKey}' ${base}/api/stablecoins | head -c 600\n`);
    process.stdout.write(`curl -s -H 'X-API-Key: ${devKey}' ${base}/api/stablecoin-summary/usdt-tether\n`);
    process.stdout.write(`curl -s ${base}/api/health\n`);
  } else {
    if (wantKey) {
      process.stdout.write(
        `No development key: the state store is unavailable (${devKeyError}). Keyed requests answer 503 until it is back; then restart with --dev-key or run: npx tsx scripts/keys.ts create --name dev\n`,
      );
    }
    process.stdout.write(`Listening on ${base}\n`);
  }
  const stop = () => {
    void close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
