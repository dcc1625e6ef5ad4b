/**
 * Bench of the key lane (issue 19 item 9), printed as one JSON object on stdout:
 * - auth overhead: req/s of a keyed route (a 0.5 KB summary) against an exempt route of the same build
 *   (the 2 KB dependency graph: the smallest exempt body) on one instance (wrk -t1 -c50,
 *   `BENCH_AUTH_SECONDS` s per run, 3 alternating runs, medians), their ratio and both body sizes;
 * - 429 exactness: 2 API instances sharing one Postgres schema and Redis; 20 keys of 100 requests per
 *   minute; 10,000 requests (500 per key) spread over both instances within the minute; per key the
 *   number of 200s must be exactly 100 and every other answer 429.
 * Usage: `npx tsx scripts/bench/auth-quota.ts <data dir with a published build>`. Needs Postgres and
 * Redis on 127.0.0.1 (the machine's services) and `wrk` on PATH.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { promisify } from "node:util";
import pg from "pg";
import { KeyStore, openSqlClient } from "../../api/lib/key-store.ts";
import { startServer } from "../../api/server.ts";
import { must } from "../../lib/must.ts";

const PG_URL = "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const KEYED_ROUTE = "/api/stablecoin-summary/usdt-tether";
const EXEMPT_ROUTE = "/api/dependency-graph/v1";
const KEYS = 20,
  LIMIT = 100,
  REQUESTS = 10_000;
const SECONDS = Number(process.env.BENCH_AUTH_SECONDS ?? 6);

const dataDir = process.argv[2];
if (!dataDir) throw new Error("usage: auth-quota.ts <data dir with a published build>");
const run = promisify(execFile);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Requests/s of wrk against `url` with `headers` (Requests/sec line). */
async function wrkRps(url: string, headers: Record<string, string>): Promise<number> {
  const args = [
    "-t1",
    "-c50",
    `-d${SECONDS}s`,
    ...Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
    url,
  ];
  const { stdout } = await run("wrk", args);
  const m = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout);
  if (!m) throw new Error(`wrk printed no Requests/sec:\n${stdout}`);
  if (non2xx) throw new Error(`wrk got ${non2xx[1]} non-2xx answers from ${url}`);
  return Number(m[1]);
}

const schema = `ballast_bench_auth_${process.pid}_${Date.now()}`;
await admin(`create schema ${schema}`);
const url = `${PG_URL}?options=-csearch_path%3D${schema}`;
const pepper = randomBytes(16).toString("hex");
const servers: Awaited<ReturnType<typeof startServer>>[] = [];
try {
  for (let i = 0; i < 2; i++) {
    servers.push(
      await startServer(
        {
          PORT: 0,
          HOST: "127.0.0.1",
          BALLAST_DATA_DIR: dataDir,
          CLOCK: "auto",
          DATABASE_URL: url,
          API_KEY_PEPPER: pepper,
          REDIS_URL,
          STATUS_RECORD_INTERVAL_SEC: 0,
        },
        { devKey: true, devKeyLimitPerMinute: 1_000_000_000 },
      ),
    );
  }
  const base = servers.map((s) => `http://127.0.0.1:${s.port}`);

  // Auth overhead: keyed vs exempt on instance 0, alternating runs.
  const bytes = async (path: string, headers: Record<string, string>) =>
    Buffer.from(await (await fetch(`${base[0]}${path}`, { headers })).arrayBuffer()).byteLength;
  const devKey = must(servers[0].devKey, "dev key printed by instance 0");
  const keyedBytes = await bytes(KEYED_ROUTE, { "X-API-Key": devKey }),
    exemptBytes = await bytes(EXEMPT_ROUTE, {});
  const keyed: number[] = [],
    exempt: number[] = [];
  for (let r = 0; r < 3; r++) {
    keyed.push(await wrkRps(`${base[0]}${KEYED_ROUTE}`, { "X-API-Key": devKey }));
    exempt.push(await wrkRps(`${base[0]}${EXEMPT_ROUTE}`, {}));
  }

  // 429 exactness across the two instances.
  const sql = await openSqlClient({ databaseUrl: url, pgliteDir: "" });
  const store = new KeyStore(sql, pepper);
  await store.init();
  const tokens: string[] = [];
  for (let k = 0; k < KEYS; k++)
    tokens.push(
      (await store.create({ name: `bench-${k}`, rateLimitPerMinute: LIMIT }, { maxRateLimitPerMinute: LIMIT })).token,
    );
  await sql.close();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
  const statuses = tokens.map(() => new Map<number, number>());
  const get = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const k = i % KEYS;
      const req = http.get(
        `${base[Math.floor(i / KEYS) % 2]}${KEYED_ROUTE}`,
        { agent, headers: { "X-API-Key": tokens[k] } },
        (res) => {
          res.resume();
          res.on("end", () => {
            const status = res.statusCode ?? 0; // a client response always has one
            statuses[k].set(status, (statuses[k].get(status) ?? 0) + 1);
            resolve();
          });
        },
      );
      req.on("error", reject);
    });
  const t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < REQUESTS) await get(next++);
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  agent.destroy();
  const ok = statuses.map((m) => m.get(200) ?? 0);
  const other = statuses.map((m) =>
    [...m.entries()].filter(([s]) => s !== 200 && s !== 429).reduce((a, [, n]) => a + n, 0),
  );
  process.stdout.write(
    `${JSON.stringify({
      keyedRps: median(keyed),
      exemptRps: median(exempt),
      ratio: median(keyed) / median(exempt),
      keyedRoute: KEYED_ROUTE,
      exemptRoute: EXEMPT_ROUTE,
      keyedBytes,
      exemptBytes,
      quota: {
        keys: KEYS,
        limit: LIMIT,
        requests: REQUESTS,
        seconds,
        exactKeys: ok.filter((n) => n === LIMIT).length,
        min200: Math.min(...ok),
        max200: Math.max(...ok),
        otherStatuses: other.reduce((a, b) => a + b, 0),
      },
    })}\n`,
  );
} finally {
  for (const s of servers) await s.close();
  await admin(`drop schema if exists ${schema} cascade`);
}
process.exit(0);
