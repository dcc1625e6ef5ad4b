import { serve } from "@hono/node-server";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "./app.ts";
import { type ApiConfig, loadApiConfig } from "./config.ts";
import { KeyStore, openSqlClient } from "./lib/key-store.ts";
import { fsReader, PublishedStore } from "./lib/published.ts";
import { PublishedDb } from "./lib/published-db.ts";
import { KeyRateLimiter } from "./lib/rate-limit.ts";

/** Pepper of the embedded default: created once, kept beside the PGlite state. */
function embeddedPepper(dataDir: string): string {
  const dir = join(dataDir, "state");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "pepper");
  if (!existsSync(path)) writeFileSync(path, randomBytes(32).toString("hex"), { mode: 0o600 });
  return readFileSync(path, "utf8").trim();
}

/** Opens the state store, limiter and published store, and starts listening. */
export async function startServer(config: ApiConfig, opts: { devKey?: boolean; devKeyLimitPerMinute?: number } = {}) {
  mkdirSync(join(config.BALLAST_DATA_DIR, "state"), { recursive: true });
  const sql = await openSqlClient({ databaseUrl: config.DATABASE_URL, pgliteDir: join(config.BALLAST_DATA_DIR, "state", "pglite") });
  const keys = new KeyStore(sql, config.API_KEY_PEPPER ?? embeddedPepper(config.BALLAST_DATA_DIR));
  await keys.init();
  let redis: unknown;
  if (config.REDIS_URL) {
    const { Redis } = await import("ioredis");
    redis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  }
  const origins = config.CORS_ORIGINS?.split(",").map((s) => s.trim()).filter(Boolean)
    ?? [`http://127.0.0.1:${config.PORT}`, `http://localhost:${config.PORT}`];
  const store = new PublishedStore(fsReader(config.BALLAST_DATA_DIR));
  const db = new PublishedDb(store);
  const app = createApp({
    store, db, keys, limiter: new KeyRateLimiter(redis),
    corsOrigins: origins, clockMode: config.CLOCK,
  });
  const devKey = opts.devKey ? (await keys.create({ name: "development", tier: "standard", rateLimitPerMinute: opts.devKeyLimitPerMinute })).token : undefined;
  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST });
  await new Promise<void>((r) => server.once("listening", () => r()));
  const close = async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await sql.close();
    await db.close();
    if (redis) (redis as { disconnect(): void }).disconnect();
  };
  return { server, devKey, close };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = loadApiConfig();
  const { devKey, close } = await startServer(config, { devKey: process.argv.includes("--dev-key") });
  const base = `http://127.0.0.1:${config.PORT}`;
  if (devKey) {
    process.stdout.write(`API key: ${devKey}\n`);
    process.stdout.write(`Listening on ${base}\n`);
    process.stdout.write(`curl -s -H 'X-API-Key: ${devKey}' ${base}/api/stablecoins | head -c 600\n`);
    process.stdout.write(`curl -s -H 'X-API-Key: ${devKey}' ${base}/api/stablecoin-summary/usdt-tether\n`);
    process.stdout.write(`curl -s ${base}/api/health\n`);
  } else {
    process.stdout.write(`Listening on ${base}\n`);
  }
  const stop = () => { void close().then(() => process.exit(0)); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
