import { resolve } from "node:path";
import { z } from "zod";

const ApiConfigSchema = z.object({
  /** Listening port; 0 picks a free one (see `startServer().port`). */
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default("127.0.0.1"),
  BALLAST_DATA_DIR: z.string().default(resolve(process.cwd(), "data")),
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
  /** Messaging-bot webhook secret (`X-Telegram-Bot-Api-Secret-Token`); unset: the webhook lane is not served (404). */
  TELEGRAM_WEBHOOK_SECRET: z.string().min(16).optional(),
}).superRefine((c, ctx) => {
  if (c.DATABASE_URL && !c.API_KEY_PEPPER) ctx.addIssue({ code: "custom", path: ["API_KEY_PEPPER"], message: "API_KEY_PEPPER is required with DATABASE_URL" });
});
export type ApiConfig = z.infer<typeof ApiConfigSchema>;

/** Parses the API config from env; prints every problem and exits 1 when invalid. */
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const res = ApiConfigSchema.safeParse(env);
  if (!res.success) {
    process.stderr.write(`Invalid API configuration:\n${z.prettifyError(res.error)}\n`);
    process.exit(1);
  }
  return res.data;
}
