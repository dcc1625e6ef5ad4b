/**
 * Fuzz-mix load driver of `make bench`'s memory-under-abuse row (issue 30 item 9). Sends REQUESTS
 * requests, CONCURRENCY at a time over keep-alive connections, to a running API and prints one JSON
 * line: `{ requests, seconds, statuses, errors, oversized, oversizedAnsweredEarly }` (statuses and
 * socket error codes counted; an oversized body "answered early" got its answer before the client
 * finished sending it). The caller reads the server's RSS before and after. On stderr: the 12 request
 * kinds with the most total latency (count, total, max), to see where a slow run waited.
 *
 * Mix (seeded, so every run sends the same requests): ~55% keyed GETs of read routes with random
 * parameters (valid ids and values, unknown ids, unknown parameters, bad values; one in eight with
 * a wrong key), ~10% `/api/health`, ~33% small POSTs to the write routes (`/api/feedback`,
 * `/api/donor-key-claims`, `/api/telegram-webhook`: valid-looking JSON, junk, wrong types), ~2%
 * oversized bodies of 1-6 MB to those write routes, half declared by Content-Length, half chunked
 * in 64 KiB pieces; the client stops sending once the server answered.
 *
 * Usage: npx tsx scripts/bench/abuse-memory.ts <baseUrl> <apiKey> [requests=100000] [concurrency=32] [stablecoinId…]
 */
import http from "node:http";
import { prng } from "../../test/helpers/prng.ts";

const [base = "", apiKey = "", requestsArg = "100000", concurrencyArg = "32", ...ids] = process.argv.slice(2);
if (!base || !apiKey) {
  process.stderr.write(
    "usage: abuse-memory.ts <baseUrl> <apiKey> [requests] [concurrency] [stablecoinId…]\n(see the file header)\n",
  );
  process.exit(2);
}
const REQUESTS = Number(requestsArg);
const CONCURRENCY = Number(concurrencyArg);
const STABLECOINS = ids.length ? ids : ["usdt-tether", "usdc-circle", "dai-makerdao"];
const MAX_OVERSIZED = 6 * 1024 * 1024;
const CHUNK = 64 * 1024;
const url = new URL(base);

const rand = prng(30_9);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const word = () => Math.floor(rand() * 36 ** 6).toString(36);

/** One planned request. */
interface Plan {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  /** Small body, or the size of an oversized one (sent from one shared buffer). */
  body?: string;
  oversized?: { bytes: number; chunked: boolean };
}

const WRITE_PATHS = ["/api/feedback", "/api/donor-key-claims", "/api/telegram-webhook"] as const;

function readPath(): string {
  const id = rand() < 0.8 ? pick(STABLECOINS) : `${word()}-${word()}`;
  const date = `20${int(20, 27)}-${String(int(1, 13)).padStart(2, "0")}-${String(int(1, 31)).padStart(2, "0")}`;
  return pick([
    () => `/api/stablecoins${rand() < 0.5 ? "" : `?${word()}=${word()}`}`,
    () => `/api/stablecoin-summary/${id}`,
    () => `/api/stablecoin/${id}`,
    () => `/api/supply-history?stablecoin=${id}&days=${pick([1, 7, 30, 90, 365, int(-5, 5000)])}`,
    () => `/api/depeg-events?stablecoin=${id}&limit=${int(0, 600)}`,
    () => `/api/non-usd-share?days=${int(-3, 4000)}`,
    () => `/api/events?limit=${int(0, 300)}&cursor=${word()}`,
    () => `/api/snapshot/${date}/stablecoin/${id}`,
    () => `/api/peg-summary?${word()}=${int(0, 1e9)}`,
    () => `/api/safety-score-history?stablecoin=${id}`,
    () => `/api/${word()}`,
  ])();
}

function smallBody(path: (typeof WRITE_PATHS)[number]): string {
  if (rand() < 0.15) return `{${word()}`; // not JSON
  if (path === "/api/feedback")
    return JSON.stringify(
      rand() < 0.5
        ? { message: word().repeat(int(1, 60)), ...(rand() < 0.3 ? { email: `${word()}@example.org` } : {}) }
        : { message: int(0, 9), phone: word() },
    );
  if (path === "/api/donor-key-claims")
    return JSON.stringify({ message: `${word()} wants you to sign in`.repeat(int(1, 20)), signature: `0x${word()}` });
  return JSON.stringify({ update_id: int(0, 1e9), message: { text: word(), chat: { id: int(1, 1e6) } } });
}

/** Share of oversized bodies (ABUSE_OVERSIZED_SHARE, default 0.02; 0 or 1 isolate the two halves of the mix). */
const OVERSIZED_SHARE = Number(process.env.ABUSE_OVERSIZED_SHARE ?? 0.02);

function plan(): Plan {
  if (rand() < OVERSIZED_SHARE) {
    const path = pick(WRITE_PATHS);
    const oversized = { bytes: int(1024 * 1024, MAX_OVERSIZED), chunked: rand() < 0.5 };
    return { method: "POST", path, headers: { "Content-Type": "application/json" }, oversized };
  }
  const r = rand();
  if (r < 0.55) {
    const key = rand() < 0.875 ? apiKey : `bl_live_${word()}_${word()}`;
    return { method: "GET", path: readPath(), headers: { "X-API-Key": key } };
  }
  if (r < 0.65) return { method: "GET", path: "/api/health", headers: {} };
  const path = pick(WRITE_PATHS);
  return { method: "POST", path, headers: { "Content-Type": "application/json" }, body: smallBody(path) };
}

const filler = Buffer.alloc(MAX_OVERSIZED, 0x61);
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const statuses: Record<string, number> = {};
const errors: Record<string, number> = {};
let oversized = 0;
let oversizedAnsweredEarly = 0;

/** Sends one planned request; resolves when it is answered (body read) or failed. */
function send(p: Plan): Promise<void> {
  const t0 = performance.now();
  return new Promise<void>((resolve) => {
    let settled = false;
    let bodyDone = false;
    const finish = () => {
      if (!settled) {
        settled = true;
        resolve();
      }
    };
    const headers: Record<string, string> = { ...p.headers };
    if (p.oversized && !p.oversized.chunked) headers["Content-Length"] = String(p.oversized.bytes);
    const req = http.request(
      { host: url.hostname, port: url.port, path: p.path, method: p.method, headers, agent },
      (res) => {
        statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        if (p.oversized && !bodyDone) oversizedAnsweredEarly++;
        res.resume();
        res.on("end", () => {
          // A connection with part of a body still unsent cannot carry another request.
          if (!bodyDone) req.destroy();
          finish();
        });
        res.on("error", finish);
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (!settled) errors[err.code ?? err.message] = (errors[err.code ?? err.message] ?? 0) + 1;
      finish();
    });
    if (!p.oversized) {
      bodyDone = true;
      req.end(p.body);
      return;
    }
    oversized++;
    const total = p.oversized.bytes;
    let sent = 0;
    const pump = () => {
      while (!settled && !req.destroyed && sent < total) {
        const n = Math.min(CHUNK, total - sent);
        const more = req.write(filler.subarray(sent, sent + n));
        sent += n;
        if (!more) return void req.once("drain", pump);
      }
      if (sent >= total && !req.destroyed) {
        bodyDone = true;
        req.end();
      }
    };
    pump();
  }).then(() => {
    const ms = performance.now() - t0;
    const k = p.oversized
      ? `oversized ${p.path} ${p.oversized.chunked ? "chunked" : "length"}`
      : `${p.method} ${p.path.split("?")[0].split("/").slice(0, 3).join("/")}`;
    const s = slow[k] ?? { n: 0, totalMs: 0, maxMs: 0 };
    slow[k] = s;
    s.n++;
    s.totalMs += ms;
    s.maxMs = Math.max(s.maxMs, ms);
  });
}
const slow: Record<string, { n: number; totalMs: number; maxMs: number }> = {};

const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < REQUESTS) {
      next++;
      await send(plan());
    }
  }),
);
agent.destroy();
process.stdout.write(
  `${JSON.stringify({
    requests: REQUESTS,
    seconds: (performance.now() - started) / 1000,
    statuses,
    errors,
    oversized,
    oversizedAnsweredEarly,
  })}\n`,
);
process.stderr.write(
  `${Object.entries(slow)
    .sort((a, b) => b[1].totalMs - a[1].totalMs)
    .slice(0, 12)
    .map(([k, v]) => `${k}: n=${v.n} total=${(v.totalMs / 1000).toFixed(1)}s max=${v.maxMs.toFixed(0)}ms`)
    .join("\n")}\n`,
);
