import { resolve } from "node:path";
import { z } from "zod";
import { parseTrustedProxies } from "./lib/client-address.ts";

const ApiConfigSchema = z
  .object({
    /** Listening port; 0 picks a free one (see `startServer().port`). */
    PORT: z.coerce.number().int().min(0).max(65535).default(8787),
    HOST: z.string().default("127.0.0.1"),
    /**
     * Public origin of this API (spec `{base_url}`, e.g. `https://api.example.com`), which the served OpenAPI
     * `servers`, `/docs` and the Postman environment point at; unset: `http://<HOST>:<PORT>` (loopback for a
     * wildcard HOST). A trailing slash is dropped.
     */
    PUBLIC_BASE_URL: z.string().url().optional(),
    /** Local data dir: the published tree when STORAGE_DRIVER=fs; with either driver the embedded state store (`state/`) and the docs page cache (`docs/`). */
    BALLAST_DATA_DIR: z.string().default(resolve(process.cwd(), "data")),
    /**
     * Where published builds are read from: `fs` (BALLAST_DATA_DIR) or `s3` (S3_BUCKET, the bucket the
     * build's S3 sink publishes to; same env names as build/config.ts, so one env serves both).
     */
    STORAGE_DRIVER: z.enum(["fs", "s3"]).default("fs"),
    /** S3-compatible endpoint (MinIO, R2, s3rver); unset: AWS S3 in S3_REGION. */
    S3_ENDPOINT: z.string().url().optional(),
    S3_BUCKET: z.string().min(3).optional(),
    S3_REGION: z.string().min(1).default("us-east-1"),
    /** Static credentials (both or neither); neither: the AWS SDK's default chain (env, shared config, instance or task role). Read-only access suffices: s3:GetObject and s3:ListBucket. */
    S3_ACCESS_KEY_ID: z.string().min(1).optional(),
    S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    /** Path-style addressing (`<endpoint>/<bucket>/<key>`), as the build's sink uses; `false` for virtual-hosted style. */
    S3_FORCE_PATH_STYLE: z
      .enum(["true", "false"])
      .default("true")
      .transform((v) => v === "true"),
    /** Key prefix of the published tree in the bucket (e.g. `ballast/`, ending in `/`); default none, where the build's sink writes. */
    S3_PREFIX: z
      .string()
      .regex(/^([^/].*\/)?$/, "must be empty or end in / (and not start with /)")
      .default(""),
    /** Deadline (ms) of opening a connection to the object store. */
    S3_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
    /** Deadline (ms) of one object read until its response starts, and the longest idle gap while its body streams. */
    S3_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(3000),
    /** Longest wait (ms) of one object read for the store to start answering, its retry included: a hung store costs a request at most this. */
    S3_READ_DEADLINE_MS: z.coerce.number().int().min(50).max(120_000).default(2000),
    /** Most concurrent connections to the object store per instance (further reads queue). */
    S3_MAX_SOCKETS: z.coerce.number().int().min(1).max(1024).default(64),
    /** How often (ms) an instance re-reads `latest.json`: instances sharing a store switch to a new build within about this long. */
    POINTER_REFRESH_MS: z.coerce.number().int().min(0).max(600_000).default(1000),
    /**
     * Byte budget (MiB) of the process-wide response cache: finished bodies of the read routes, their
     * keys and the request URLs the Node fast path knows (oldest out first). A response above an eighth
     * of it is never cached (it is rebuilt per request).
     */
    RESPONSE_CACHE_MIB: z.coerce.number().min(0).max(4096).default(16),
    /**
     * Byte budget (MiB) of the serving build's cache of published file bytes and parsed payloads (least
     * recently used out first; a parsed payload is charged twice its file's size). A file above it is
     * read again (and parsed again) each time a request needs it.
     */
    BUILD_CACHE_MIB: z.coerce.number().min(0).max(65536).default(32),
    /**
     * How far (percent) V8 lets the JS heap grow past what its last full garbage collection kept, set
     * by `api/server.ts` when it starts (V8 flag `--heap-growing-percent`); 0 leaves V8's own choice
     * (up to 4× on a large machine, a 300 MB server after 100k distinct URLs against ~250 MB at 100).
     */
    HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(100),
    /** Postgres state store; PGlite under `<data>/state` when unset. */
    DATABASE_URL: z.string().optional(),
    /** `application_name` of the API's Postgres connections; an `application_name` in DATABASE_URL wins. */
    PGAPPNAME: z.string().min(1).default("ballast-api"),
    /** Deadline (ms) of one key lookup, of connecting to Postgres and of one statement. */
    STATE_STORE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(300),
    /** HMAC pepper for key hashes. Required with DATABASE_URL; the embedded default keeps one in `<data>/state/pepper`. */
    API_KEY_PEPPER: z.string().min(16).optional(),
    /**
     * The previous pepper during a pepper rotation: keys whose hash matches it still verify and are
     * re-hashed with API_KEY_PEPPER on their next use. Drop it once every key has been used (or list
     * `pepper_version` in api_keys).
     */
    API_KEY_PEPPER_PREVIOUS: z.string().min(16).optional(),
    /** Cool-down (ms) of the state store's circuit breaker: after a timeout, keyed requests fail fast (503) this long, then one probe passes. */
    STATE_STORE_COOLDOWN_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
    /** Shared rate limiter across instances; in-process when unset. */
    REDIS_URL: z.string().optional(),
    /**
     * Proxies trusted to report the client address of per-IP limits (failed key attempts, donor claims,
     * feedback): a hop count (`1`: the CDN or load balancer connecting to the API) or a comma list of
     * addresses, CIDR ranges and `loopback` / `linklocal` / `uniquelocal`. Through trusted hops the client
     * is `CF-Connecting-IP`, else the first untrusted address of `X-Forwarded-For` read right to left.
     * Unset: the socket peer (behind a proxy every client then shares the proxy's budget).
     */
    TRUSTED_PROXIES: z
      .string()
      .optional()
      .superRefine((v, ctx) => {
        try {
          parseTrustedProxies(v);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: err instanceof Error ? err.message : String(err) });
        }
      }),
    /** Deadline (ms) of one Redis limiter check and of one Redis command. */
    REDIS_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(300),
    /**
     * Per-minute limit of the development key printed by `api/server.ts --dev-key` (`make run`).
     * Unlike operator keys (1–10000) it may go up to 2^31 − 1 so benchmarks never see 429.
     */
    DEV_KEY_RATE_LIMIT: z.coerce.number().int().min(1).max(2_147_483_647).default(120),
    CORS_ORIGINS: z.string().optional(),
    CLOCK: z.enum(["auto", "wall", "replay"]).default("auto"),
    /**
     * Seconds between the status history observations of this process (health assessed and recorded in
     * the state store, api/lib/status-history.ts); 0 turns recording off (the route still reads what
     * other instances record). Observations of all instances less than half of it apart count once.
     */
    STATUS_RECORD_INTERVAL_SEC: z.coerce.number().int().min(0).max(3600).default(60),
    /** Website-internal lane secret (`X-Ballast-Site-Proxy-Secret`); unset: that lane is not served (404). */
    SITE_PROXY_SECRET: z.string().min(16).optional(),
    /** The website-internal secret being rotated out, accepted beside SITE_PROXY_SECRET until unset. */
    SITE_PROXY_SECRET_PREVIOUS: z.string().min(16).optional(),
    /** Messaging-bot webhook secret (`X-Telegram-Bot-Api-Secret-Token`); unset: the webhook lane is not served (404). */
    TELEGRAM_WEBHOOK_SECRET: z.string().min(16).optional(),
    /** Bot token from @BotFather: the Bot API credential and the mini-app init-data HMAC key. Unset: no bot (its routes answer 503, no alerts). */
    TELEGRAM_BOT_TOKEN: z
      .string()
      .regex(/^\d+:[A-Za-z0-9_-]{30,}$/, "expected <bot id>:<secret> as @BotFather gives it")
      .optional(),
    /** Bot API root (default `https://api.telegram.org`; tests and self-hosted Bot API servers set their own). */
    TELEGRAM_API_ROOT: z.string().url().optional(),
    /** Max age (s) of mini-app init data for a session. */
    TELEGRAM_MINI_APP_MAX_AGE_SEC: z.coerce.number().int().positive().default(86400),
    /** Max age (s) of mini-app init data for a mutation. */
    TELEGRAM_MINI_APP_MUTATE_MAX_AGE_SEC: z.coerce.number().int().positive().default(3600),
    /** Seconds between alert dispatch runs (a new serving build is dispatched within one); 0 turns dispatch off. */
    TELEGRAM_ALERTS_INTERVAL_SEC: z.coerce.number().int().min(0).max(3600).default(60),
    /** Smallest freeze or destroy (USD at the event) that alerts its followers. */
    TELEGRAM_ALERT_FREEZE_MIN_USD: z.coerce.number().positive().default(1_000_000),
    /** Public base URL prefixed to the links in alert messages (e.g. `https://ballast.example`); unset: paths only. */
    TELEGRAM_ALERT_LINK_BASE: z.string().url().optional(),
    /**
     * Operator lane (spec 4.5, 5.6): its own listener on OPS_HOST:OPS_PORT, started only when an access
     * JWT setting (OPS_ACCESS_JWKS_URL + OPS_ACCESS_AUD + OPS_ACCESS_ISSUER) or a service token
     * (OPS_SERVICE_TOKEN_ID + OPS_SERVICE_TOKEN_SECRET) is configured. Never served on PORT.
     */
    OPS_PORT: z.coerce.number().int().min(0).max(65535).default(8788),
    OPS_HOST: z.string().default("127.0.0.1"),
    /** JWKS of the access proxy (`https://<team>.cloudflareaccess.com/cdn-cgi/access/certs`). */
    OPS_ACCESS_JWKS_URL: z.string().url().optional(),
    /** Accepted access-application audience tag(s), comma-separated. */
    OPS_ACCESS_AUD: z.string().min(1).optional(),
    /** Exact JWT issuer (`https://<team>.cloudflareaccess.com`). */
    OPS_ACCESS_ISSUER: z.string().min(1).optional(),
    /** Service token for direct operator calls (`CF-Access-Client-Id` / `CF-Access-Client-Secret`). */
    OPS_SERVICE_TOKEN_ID: z.string().min(8).optional(),
    OPS_SERVICE_TOKEN_SECRET: z.string().min(16).optional(),
    /** Origins of the operator site's same-origin proxy, comma-separated; a mutation carrying another Origin is 403. */
    OPS_ALLOWED_ORIGINS: z.string().optional(),
    /** How long an operator job request waits for its job before answering 202 with a requestId (ms). */
    OPS_JOB_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(4000),
    /** On-chain ledger the operator's on-chain jobs open (default `<BALLAST_DATA_DIR>/onchain.duckdb`, as the build reads it). */
    BALLAST_ONCHAIN_LEDGER: z.string().optional(),
    /** Donor key claims (spec 5.3): `false` answers 403 `claims_closed` before anything else. */
    DONOR_CLAIMS_OPEN: z
      .enum(["true", "false"])
      .default("true")
      .transform((v) => v === "true"),
    /** EIP-4361 domain a claim message must name (default `127.0.0.1:<PORT>`, the embedded site). */
    DONOR_CLAIM_DOMAIN: z.string().min(1).optional(),
    /** EIP-4361 URI a claim message must name: the API access page (default `http://<DONOR_CLAIM_DOMAIN>/api/`). */
    DONOR_CLAIM_URI: z.string().url().optional(),
    /** EIP-4361 chain id of claim messages. */
    DONOR_CLAIM_CHAIN_ID: z.coerce.number().int().positive().default(1),
    /** JSON-RPC of that chain: a claiming address with code (contract wallet, delegated account) is refused. Unset: signature recovery alone. */
    DONOR_CLAIM_RPC_URL: z.string().url().optional(),
    /** `true`: maintenance mode on whatever the operator switch says (503 maintenance on every public `/api/*` request). */
    MAINTENANCE_MODE: z
      .enum(["true", "false"])
      .default("false")
      .transform((v) => v === "true"),
  })
  .superRefine((c, ctx) => {
    if (c.STORAGE_DRIVER === "s3" && !c.S3_BUCKET)
      ctx.addIssue({ code: "custom", path: ["S3_BUCKET"], message: "S3_BUCKET is required when STORAGE_DRIVER=s3" });
    if (Boolean(c.S3_ACCESS_KEY_ID) !== Boolean(c.S3_SECRET_ACCESS_KEY))
      ctx.addIssue({
        code: "custom",
        path: ["S3_ACCESS_KEY_ID"],
        message:
          "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (or leave both unset for the AWS SDK's default credential chain)",
      });
    if (c.DATABASE_URL && !c.API_KEY_PEPPER)
      ctx.addIssue({
        code: "custom",
        path: ["API_KEY_PEPPER"],
        message: "API_KEY_PEPPER is required with DATABASE_URL",
      });
    const jwt = [c.OPS_ACCESS_JWKS_URL, c.OPS_ACCESS_AUD, c.OPS_ACCESS_ISSUER].filter(Boolean).length;
    if (jwt !== 0 && jwt !== 3)
      ctx.addIssue({
        code: "custom",
        path: ["OPS_ACCESS_JWKS_URL"],
        message: "OPS_ACCESS_JWKS_URL, OPS_ACCESS_AUD and OPS_ACCESS_ISSUER go together",
      });
    if (Boolean(c.OPS_SERVICE_TOKEN_ID) !== Boolean(c.OPS_SERVICE_TOKEN_SECRET))
      ctx.addIssue({
        code: "custom",
        path: ["OPS_SERVICE_TOKEN_ID"],
        message: "OPS_SERVICE_TOKEN_ID and OPS_SERVICE_TOKEN_SECRET go together",
      });
    if (c.OPS_PORT !== 0 && c.OPS_PORT === c.PORT)
      ctx.addIssue({
        code: "custom",
        path: ["OPS_PORT"],
        message: "OPS_PORT must differ from PORT: the operator lane never shares the public listener",
      });
  });
export type ApiConfig = z.infer<typeof ApiConfigSchema>;

/** Parses an API config without exiting: the config, or every problem as one message per line (tests, tools). */
export function parseApiConfig(env: NodeJS.ProcessEnv): { ok: true; config: ApiConfig } | { ok: false; error: string } {
  const res = ApiConfigSchema.safeParse(env);
  return res.success ? { ok: true, config: res.data } : { ok: false, error: z.prettifyError(res.error) };
}

/** Parses the API config from env; prints every problem and exits 1 when invalid. */
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const res = ApiConfigSchema.safeParse(env);
  if (!res.success) {
    process.stderr.write(`Invalid API configuration:\n${z.prettifyError(res.error)}\n`);
    process.exit(1);
  }
  return res.data;
}
