/**
 * `make bench`: a report. It exits 0 when targets are missed, non-zero only when something cannot
 * run (a server that does not start, a missing tool).
 *
 * 1. Build from the recorded capture, RUNS runs each cold (fresh scratch dir) then warm (parsed-capture cache filled):
 *    wall time and peak RSS (targets ≤ 60 s, ≤ 2 GiB).
 * 2. Depeg detection over all recorded history, 3 fresh processes: time and peak RSS (≤ 10 s); in the same
 *    runs, the risk stage (DEWS, stability index, safety scores and their daily history; ≤ 15 s).
 *    Then the markets stage as of 2026-09-03 (pools, matching, DEX liquidity, backstops, chain health,
 *    yields; scripts/bench/markets-stage.ts, 3 fresh processes; ≤ 10 s).
 * 3. API against a bare `node:http` server and nginx serving the same bytes, in this invocation. The
 *    machine is small and noisy, so absolute numbers mean little; ratios of runs seconds apart do.
 *    - The API is started exactly as `make run` starts it: `make serve`'s server line, read with
 *      `make -n` (`npx tsx api/server.ts --dev-key` under tsx, not compiled, with the Makefile's
 *      SERVER_ENV), BALLAST_LOG as the Makefile exports it (default info), DEV_KEY_RATE_LIMIT=1e9
 *      (raised as a user may, so the load meets no 429), on the last build. RSS is that of the server
 *      process (tsx's child node), not npx's. nginx is configured as a user would: 1 worker,
 *      `sendfile on`, `gzip_static on`, the JSON type with charset utf-8, no extra headers, access
 *      log off. The bare node:http server gets the same requests as the API (the key header too) and
 *      answers each with the API's own status, headers (CORS, freshness, Content-Type, Content-Encoding;
 *      names in the API's letter case; Node adds Date and Connection as for the API; an object given to
 *      `writeHead`, the plain way) and body, read from the API before the runs, with no work in
 *      between: one Node process's ceiling for the same exchange, so API/bare Node is the app's own
 *      share. All three are
 *      pinned to core 0 and wrk to core 1 with taskset (unpinned, with a note, when taskset or a
 *      second core is missing).
 *    - Bodies: the summary; a fresh /api/stablecoins body (its `_meta` changes every second),
 *      rewritten before every nginx run, and its zlib level-9 `.gz` sibling for the compressed case.
 *    - wrk -t1 -c50 --latency: per case a 5 s warm-up per side, then 5 rounds of 8 s per side, taken
 *      as 8 turns of 1 s runs (API, bare Node, nginx), so a swing of the machine's speed falls on all
 *      three, then one 8 s run per side for latency; API/nginx, API/bare Node and bare Node/nginx are per round, shown
 *      as median [min–max]. Any non-2xx answer or socket error of the API marks the row INVALID. The
 *      compressed case sends `Accept-Encoding: gzip`; if the API does not answer gzip, the row says
 *      NOT COMPRESSED. Targets: the API/nginx ones, and API ≥ 0.9× bare Node on every row.
 *    - Server RSS (VmRSS): at start with the embedded PGlite state store and after ≥ 100,000
 *      distinct keyed read URLs (scripts/bench/unique-urls.lua); a fresh server after the 100,000-request
 *      abuse mix of scripts/bench/abuse-memory.ts (random GETs and POSTs, bodies up to 6 MB to the
 *      write routes, 32 at a time; ≤ 300 MB); a server on Postgres (fresh schema) at start and after
 *      the unique URLs. BENCH_API_ONLY=1 stops after this section.
 * 4. On-chain: ingestion throughput against anvil (scripts/bench/onchain-ingest.ts) and /api/blacklist
 *    latency over SYNTHETIC ledgers of 100,000 and 1,000,000 events (scripts/bench/blacklist-latency.ts:
 *    the serving layout in a temp dir, never published; 3 fresh serving processes per size, medians;
 *    cursor walks of every sort and four filters from the first page and from the middle of each order,
 *    all pages at 100k, 60 per walk at 1M; server-side time per page, identity encoding).
 * 5. Scale check (scripts/bench/scale.ts): build and detection at 10× the recorded history (a synthetic replay of
 *    the archives shifted back in time, never published) against 1×: time, RSS, ratio (BENCH_SCALE=0 skips it).
 * BENCH_DATA_DIR=<a data dir with a published build> skips sections 1 and 2.
 * If `api/server.ts` ignores DEV_KEY_RATE_LIMIT (its dev key gets 429 within 1,000 requests), the
 * API is started through scripts/bench/api-server.ts (same startServer, explicit limit) and the
 * report says so.
 */
import { type ChildProcess, execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import pg from "pg";
import { must } from "../lib/must.ts";
import type { BlacklistLatencyResult } from "./bench/blacklist-latency.ts";

const ROOT = resolve(import.meta.dirname, "..");
const BENCH_DIR = join(ROOT, "scripts/bench");
const API_ENTRY = "api/server.ts";
const API_SHIM = "scripts/bench/api-server.ts";
const API_PORT = 18790;
const NGINX_PORT = 18791;
const BARE_PORT = 18792;
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SMALL_ROUTE = "/api/stablecoin-summary/usdt-tether";
const LIST_ROUTE = "/api/stablecoins";
const UNIQUE_URLS = 100_000;
/** Alternating runs per API/nginx pair; ratios are judged at their median (issue 21 item 7: at least 5). */
const RUNS = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const have = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const int = (n: number) => Math.round(n).toLocaleString("en-US");
const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
const table = (head: string[], rows: string[][]) =>
  [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
const notes: string[] = [];

if (!have("wrk") || !have("nginx")) {
  process.stderr.write("installing nginx and wrk from Debian packages…\n");
  execFileSync("sh", ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx wrk"], {
    stdio: "inherit",
  });
}
const NPROC = Number(execFileSync("nproc").toString().trim());
const PIN = have("taskset") && NPROC >= 2;
if (!PIN)
  notes.push(
    `not pinned to cores (${have("taskset") ? `nproc = ${NPROC}` : "taskset missing"}): servers and wrk share the CPUs`,
  );

/** `cmd args` pinned to one core with taskset when possible. */
const pinned = (core: number, cmd: string, args: string[]): [string, string[]] =>
  PIN ? ["taskset", ["-c", String(core), cmd, ...args]] : [cmd, args];

// On exit (a thrown error included): children still running are killed, temp dirs removed.
const children = new Set<ChildProcess>();
const tempDirs: string[] = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(d);
  return d;
};

/** Stops a child: SIGTERM, then SIGKILL after 15 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    if ((await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)])) === false)
      child.kill("SIGKILL");
  }
  children.delete(child);
}

/** Resident set size of a process (VmRSS) in MB (10^6 bytes). */
function rssMB(pid: number): number {
  const kb = Number(must(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8")), `VmRSS of ${pid}`)[1]);
  return (kb * 1024) / 1e6;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
/** One GET, body as raw bytes (never decompressed). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; rawHeaders: string[]; body: Buffer }> {
  return new Promise((ok, fail) => {
    http
      .get(url, { headers, agent }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        // A client response always has a status; 0 is this file's "no answer".
        res.on("end", () =>
          ok({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(parts),
          }),
        );
        res.on("error", fail);
      })
      .on("error", fail);
  });
}

/** HTTP status of a GET, 0 when nothing answers. */
const statusOf = (url: string) =>
  get(url).then(
    (r) => r.status,
    () => 0,
  );

/** Throws when something already listens on `port` (it would answer in place of the server under test). */
async function assertPortFree(port: number): Promise<void> {
  if (await statusOf(`http://127.0.0.1:${port}/`))
    throw new Error(`port ${port} is already in use: stop what listens there`);
}

/** Polls `ready` until true; throws with the log when `child` exits first or `timeoutMs` passes. */
async function waitReady(
  ready: () => Promise<boolean>,
  child: ChildProcess,
  what: string,
  timeoutMs: number,
  log: () => string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && child.exitCode === null && child.signalCode === null) {
    if (await ready()) return;
    await sleep(200);
  }
  throw new Error(
    `${what} did not start (${child.exitCode !== null ? `exit code ${child.exitCode}` : (child.signalCode ?? `not ready after ${timeoutMs / 1000} s`)}):\n${log()}`,
  );
}

/** A running API process; `rssMB()` throws with the server's log when it died during the bench. */
interface Api {
  key: string;
  entry: string;
  /** Pid of the server process (not npx's). */
  pid: number;
  startRssMB: number;
  rssMB(): number;
  stop(): Promise<void>;
}

/** Pids of the descendants of `pid` (children first), from /proc/<pid>/task/<tid>/children. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tids) {
      let kids = "";
      try {
        kids = readFileSync(`/proc/${p}/task/${t}/children`, "utf8");
      } catch {}
      for (const k of kids.split(" ").filter(Boolean).map(Number)) {
        out.push(k);
        walk(k);
      }
    }
  };
  walk(pid);
  return out;
}

/** The server process under `npx tsx <entry>` (npm → sh → tsx CLI → node with tsx's loader running `entry`), or undefined. */
function serverPidUnder(rootPid: number, entry: string): number | undefined {
  const cmdline = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
    } catch {
      return [];
    }
  };
  return descendants(rootPid)
    .filter((p) => {
      const args = cmdline(p);
      return args.includes(entry) && args.includes("--import");
    })
    .pop();
}

/** Requests per minute of the bench's development key: 1e9, so the load meets no 429 (a user may raise it the same way). */
const DEV_KEY_LIMIT = "1000000000";

/**
 * The server command of `make serve` (the same line as `make run`'s, without the build), read from
 * the Makefile with `make -n` (printed, not run) for `port` and `limit`.
 */
function makeServeCommand(port: number, limit: string): string {
  const out = execFileSync("make", ["-s", "-n", "serve", `PORT=${port}`, `DEV_KEY_RATE_LIMIT=${limit}`], {
    cwd: ROOT,
  }).toString();
  return must(
    out
      .split("\n")
      .filter((l) => l.includes(API_ENTRY))
      .pop(),
    "the server line of `make -n serve`",
  );
}

/**
 * Spawns one API process on `dataDir` exactly as `make run` starts it — `make serve`'s server line
 * (`npx tsx api/server.ts --dev-key` with the Makefile's SERVER_ENV) with `PORT` and
 * `DEV_KEY_RATE_LIMIT` (DEV_KEY_LIMIT), `BALLAST_LOG` as the Makefile exports it (default `info`),
 * other settings at their defaults — pinned to core 0 (the whole process tree), and waits
 * until it printed its key and answers /api/health. RSS is the server process's (tsx's child node).
 */
async function spawnApi(entry: string, dataDir: string, env: Record<string, string>): Promise<Api> {
  await assertPortFree(API_PORT);
  const [cmd, args] = pinned(0, "sh", [
    "-c",
    entry === API_ENTRY ? makeServeCommand(API_PORT, DEV_KEY_LIMIT) : `npx tsx ${entry} --dev-key`,
  ]);
  const child = spawn(cmd, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(API_PORT),
      BALLAST_DATA_DIR: dataDir,
      BALLAST_LOG: process.env.BALLAST_LOG ?? "info",
      DEV_KEY_RATE_LIMIT: DEV_KEY_LIMIT,
      ...env,
    },
  });
  children.add(child);
  let log = "";
  const keep = (d: Buffer) => {
    log = (log + d.toString()).slice(-8000);
  };
  must(child.stdout, "API server stdout (piped)").on("data", keep);
  must(child.stderr, "API server stderr (piped)").on("data", keep);
  const keyLine = () => /API key: (\S+)/.exec(log)?.[1];
  const answers = async () => (await statusOf(`http://127.0.0.1:${API_PORT}/api/health`)) > 0;
  await waitReady(
    async () => (keyLine() !== undefined || /Listening on/.test(log)) && (await answers()),
    child,
    `API server (${entry})`,
    180_000,
    () => log,
  );
  const key = keyLine();
  const serverPid = serverPidUnder(must(child.pid, "npx pid"), entry);
  const stop = async () => {
    // npm does not pass SIGTERM on to its child: the server itself is asked to stop, then the tree is reaped.
    if (serverPid !== undefined) {
      try {
        process.kill(serverPid, "SIGTERM");
      } catch {}
    }
    await stopChild(child);
    if (serverPid !== undefined) {
      try {
        process.kill(serverPid, "SIGKILL");
      } catch {}
    }
  };
  if (!key || serverPid === undefined) {
    await stop();
    throw new Error(
      `API server (${entry}) ${key ? "process not found under npx" : 'printed no "API key:" line'}:\n${log}`,
    );
  }
  const rss = () => {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `API server (${entry}) died during the bench (${child.signalCode ?? `exit code ${child.exitCode}`}):\n${log}`,
      );
    return rssMB(serverPid);
  };
  return { key, entry, pid: serverPid, startRssMB: rss(), rssMB: rss, stop };
}

/** True when 1,000 quick keyed requests already meet 429 (the dev key's limit is not the one asked for). */
async function hitsRateLimit(api: Api): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () =>
        get(`http://127.0.0.1:${API_PORT}${SMALL_ROUTE}`, { "X-API-Key": api.key }).then((r) => r.status),
      ),
    );
    if (statuses.includes(429)) return true;
  }
  return false;
}

let apiEntry = API_ENTRY;
/** Starts the API (api/server.ts, or the bench shim once that entry turned out to ignore DEV_KEY_RATE_LIMIT). */
async function startApi(dataDir: string, env: Record<string, string> = {}): Promise<Api> {
  const api = await spawnApi(apiEntry, dataDir, env);
  if (apiEntry === API_SHIM || !(await hitsRateLimit(api))) return api;
  await api.stop();
  notes.push(
    `${API_ENTRY} --dev-key ignores DEV_KEY_RATE_LIMIT (429 within 1,000 requests): the API was started through ${API_SHIM} (same startServer, dev key limit 1e9/min)`,
  );
  apiEntry = API_SHIM;
  return spawnApi(apiEntry, dataDir, env);
}

/**
 * Starts nginx configured as a user would serve these files: 1 worker, `sendfile on`, `gzip_static on`,
 * the JSON type with `charset utf-8` (the API's Content-Type), no extra headers; access log off (nginx
 * pays no logging; the API at `BALLAST_LOG=info` logs nothing per request either). `probe` is a path it must serve.
 */
async function startNginx(root: string, probe: string): Promise<{ stop(): Promise<void> }> {
  await assertPortFree(NGINX_PORT);
  const dir = tempDir("ballast-nginx-");
  writeFileSync(
    join(dir, "nginx.conf"),
    `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 1024; }
http {
  access_log off; sendfile on; gzip_static on;
  types { application/json json; } default_type application/octet-stream; charset utf-8; charset_types application/json;
  server { listen 127.0.0.1:${NGINX_PORT}; root ${root}; }
}
`,
  );
  const [cmd, args] = pinned(0, "nginx", ["-c", join(dir, "nginx.conf"), "-p", dir]);
  const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  let log = "";
  must(child.stderr, "nginx stderr (piped)").on("data", (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
  });
  await waitReady(
    async () => (await statusOf(`http://127.0.0.1:${NGINX_PORT}${probe}`)) === 200,
    child,
    "nginx",
    10_000,
    () => log + readFileSync(join(dir, "error.log"), "utf8").slice(-2000),
  );
  return { stop: () => stopChild(child) };
}

/** One answer of the bare server: the API's body and response headers as sent (name, value, …; Date and the connection headers left to Node). */
interface BareAnswer {
  body: Buffer;
  rawHeaders: string[];
}
/** Response headers Node writes itself (or that describe the connection, not the answer). */
const NODE_OWN_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

/**
 * Starts the bare `node:http` ceiling pinned like the API: one process answering each path of
 * `answers` with its bytes and the API's headers as they were sent, nothing else: no routing beyond
 * a map lookup, no auth, no cache, no logging.
 */
async function startBareNode(dir: string, answers: Record<string, BareAnswer>): Promise<{ stop(): Promise<void> }> {
  await assertPortFree(BARE_PORT);
  const files: Record<string, { file: string; headers: Record<string, string> }> = {};
  for (const [path, a] of Object.entries(answers)) {
    const file = join(dir, `bare-${Object.keys(files).length}.body`);
    writeFileSync(file, a.body);
    // The API's names in the API's letter case, the same bytes (Node lower-cases most names it writes to spot
    // its own headers: a copy unless already lower case).
    const headers: Record<string, string> = {};
    for (let i = 0; i < a.rawHeaders.length; i += 2)
      if (!NODE_OWN_HEADERS.has(a.rawHeaders[i].toLowerCase())) headers[a.rawHeaders[i]] = a.rawHeaders[i + 1];
    files[path] = { file, headers };
  }
  const script =
    `const fs=require("fs");const m=new Map(Object.entries(${JSON.stringify(files)}).map(([p,a])=>[p,{b:fs.readFileSync(a.file),h:a.headers}]));` +
    `require("http").createServer((q,r)=>{const a=m.get(q.url);if(!a){r.writeHead(404);r.end();return}r.writeHead(200,a.h);r.end(a.b)}).listen(${BARE_PORT},"127.0.0.1")`;
  const [cmd, args] = pinned(0, process.execPath, ["-e", script]);
  const child = spawn(cmd, args, { stdio: "ignore" });
  children.add(child);
  await waitReady(
    () => statusOf(`http://127.0.0.1:${BARE_PORT}${Object.keys(answers)[0]}`).then((st) => st === 200),
    child,
    "bare node server",
    10_000,
    () => "",
  );
  return { stop: () => stopChild(child) };
}

/** One wrk run; `socketErrors` are connect/read/write errors, `timeouts` requests unanswered after wrk's 2 s. */
interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
}

/** One wrk run (-t1 -c50 --latency) pinned to core 1; latencies in ms. */
async function wrk(
  url: string,
  opts: { headers?: Record<string, string>; seconds?: number; script?: string; scriptArgs?: string[] } = {},
): Promise<WrkResult> {
  const args = [
    "-t1",
    "-c50",
    `-d${opts.seconds ?? 8}s`,
    "--latency",
    ...Object.entries(opts.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
    ...(opts.script ? ["-s", opts.script] : []),
    url,
    ...(opts.scriptArgs ? ["--", ...opts.scriptArgs] : []),
  ];
  const [cmd, cmdArgs] = pinned(1, "wrk", args);
  const out = (await promisify(execFile)(cmd, cmdArgs, { maxBuffer: 1 << 20 })).stdout;
  const ms = (v: string, u: string) =>
    Number(v) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 } as Record<string, number>)[u];
  const pct = (q: string) => {
    const m = must(new RegExp(`^\\s*${q}%\\s+([\\d.]+)(us|ms|s|m)\\b`, "m").exec(out), `wrk p${q} latency`);
    return ms(m[1], m[2]);
  };
  const total = must(/(\d+) requests in ([\d.]+)(us|ms|s|m)\b/.exec(out), "wrk request total");
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: Number(total[1]),
    seconds: ms(total[2], total[3]) / 1000,
    rps: Number(must(/Requests\/sec:\s+([\d.]+)/.exec(out), "wrk Requests/sec")[1]),
    p50: pct("50"),
    p99: pct("99"),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    socketErrors: sock ? Number(sock[1]) + Number(sock[2]) + Number(sock[3]) : 0,
    timeouts: Number(sock?.[4] ?? 0),
  };
}

interface SideStats {
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50: number;
  p99: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
}
/** A side's rounds (rates: median, min, max; errors summed, `latency`'s too) and the latency of its continuous run. */
const stats = (rs: RoundResult[], latency: WrkResult): SideStats => ({
  rps: median(rs.map((r) => r.rps)),
  rpsMin: Math.min(...rs.map((r) => r.rps)),
  rpsMax: Math.max(...rs.map((r) => r.rps)),
  p50: latency.p50,
  p99: latency.p99,
  non2xx: rs.reduce((s, r) => s + r.non2xx, latency.non2xx),
  socketErrors: rs.reduce((s, r) => s + r.socketErrors, latency.socketErrors),
  timeouts: rs.reduce((s, r) => s + r.timeouts, latency.timeouts),
});

/** One side of a comparison: URL and request headers. */
interface Side {
  url: string;
  headers: Record<string, string>;
}

/** Warm-up load per side before a comparison's rounds (s): JIT tiers and the heap settle, as in a server that has been up a while. */
const WARMUP_SECONDS = 5;
/** A round gives each side SLICES wrk runs of SLICE_SECONDS, in turn: 8 s per side per round. */
const SLICES = 8;
const SLICE_SECONDS = 1;

/** One side's round: its slices' requests and seconds summed (rps = their quotient) and errors summed. */
type RoundResult = Omit<WrkResult, "p50" | "p99">;

/** One side's slices of a round as one run (RoundResult). */
function joinSlices(rs: WrkResult[]): RoundResult {
  const requests = rs.reduce((s, r) => s + r.requests, 0);
  const seconds = rs.reduce((s, r) => s + r.seconds, 0);
  return {
    requests,
    seconds,
    rps: requests / seconds,
    non2xx: rs.reduce((s, r) => s + r.non2xx, 0),
    socketErrors: rs.reduce((s, r) => s + r.socketErrors, 0),
    timeouts: rs.reduce((s, r) => s + r.timeouts, 0),
  };
}

/**
 * Warm-up (WARMUP_SECONDS per side), then RUNS rounds; a round is SLICES turns of one SLICE_SECONDS
 * wrk run per side (API, bare Node, nginx; `beforeNginx` runs before each nginx run), each side's
 * slices joined (joinSlices). Ratios are per round. Latency (p50, p99) comes from one continuous run
 * of 8 s per side after the rounds: each 1 s run opens its 50 connections at once, a burst in every
 * turn that a client keeping its connections does not make. This machine's speed swings by up to 2× within
 * seconds (the CPU time of one cached answer of one server: 21–45 µs between 3 s runs; API/bare Node
 * of 3 s runs back to back: 0.52–1.6×), so the sides take turns every second instead of every 8 s: a
 * swing then falls on all three sides more alike.
 */
async function compare(api: Side, bare: Side, nginx: Side, beforeNginx = async () => {}) {
  await wrk(api.url, { headers: api.headers, seconds: WARMUP_SECONDS });
  await wrk(bare.url, { headers: bare.headers, seconds: WARMUP_SECONDS });
  await beforeNginx();
  await wrk(nginx.url, { headers: nginx.headers, seconds: WARMUP_SECONDS });
  const a: RoundResult[] = [];
  const b: RoundResult[] = [];
  const n: RoundResult[] = [];
  for (let i = 0; i < RUNS; i++) {
    const round: [WrkResult[], WrkResult[], WrkResult[]] = [[], [], []];
    for (let j = 0; j < SLICES; j++) {
      round[0].push(await wrk(api.url, { headers: api.headers, seconds: SLICE_SECONDS }));
      round[1].push(await wrk(bare.url, { headers: bare.headers, seconds: SLICE_SECONDS }));
      await beforeNginx();
      round[2].push(await wrk(nginx.url, { headers: nginx.headers, seconds: SLICE_SECONDS }));
    }
    a.push(joinSlices(round[0]));
    b.push(joinSlices(round[1]));
    n.push(joinSlices(round[2]));
  }
  const apiLatency = await wrk(api.url, { headers: api.headers });
  const bareLatency = await wrk(bare.url, { headers: bare.headers });
  await beforeNginx();
  const nginxLatency = await wrk(nginx.url, { headers: nginx.headers });
  return {
    api: stats(a, apiLatency),
    bare: stats(b, bareLatency),
    nginx: stats(n, nginxLatency),
    ratios: a.map((r, i) => r.rps / n[i].rps),
    bareRatios: a.map((r, i) => r.rps / b[i].rps),
    bareNginxRatios: b.map((r, i) => r.rps / n[i].rps),
  };
}

/**
 * Runs the unique-URL wrk script until ≥ `target` responses (gives up after 900 s; the report says
 * so). wrk always runs its full -d even after the script stopped its thread, so the first run lasts
 * 20 s and the next ones as long as the rate so far needs, plus 3 s. Each run starts 1,000 URLs past
 * the requests done so far (more than the 50 in flight when a run ends), so no URL repeats.
 */
async function uniqueUrlLoad(api: Api, stablecoinIds: string[], target: number) {
  let requests = 0,
    non2xx = 0,
    socketErrors = 0,
    timeouts = 0,
    seconds = 0,
    runs = 0;
  while (requests < target && seconds < 900) {
    const rate = requests / seconds || 0;
    const r = await wrk(`http://127.0.0.1:${API_PORT}`, {
      headers: { "X-API-Key": api.key },
      seconds: rate ? Math.min(300, Math.ceil((target - requests) / rate) + 3) : 20,
      script: join(BENCH_DIR, "unique-urls.lua"),
      scriptArgs: [String(requests + runs * 1000), String(target - requests), ...stablecoinIds],
    });
    requests += r.requests;
    non2xx += r.non2xx;
    socketErrors += r.socketErrors;
    timeouts += r.timeouts;
    seconds += r.seconds;
    runs++;
  }
  return { requests, non2xx, socketErrors, timeouts, seconds, runs };
}

/** Runs `fn` with a Postgres URL whose search_path is a fresh schema, dropped afterwards. */
async function withPgSchema<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const schema = `ballast_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  try {
    return await fn(`${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=-csearch_path%3D${schema}`);
  } finally {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}

/** Writes `bytes` to `path` atomically (nginx may be serving it). */
function writeAtomic(path: string, bytes: Buffer | string): void {
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
}

const spread = (label: string, xs: number[], digits: number, target: string) => [
  label,
  median(xs).toFixed(digits),
  Math.min(...xs).toFixed(digits),
  Math.max(...xs).toFixed(digits),
  target,
];

/**
 * 1. Builds from the recorded capture RUNS times, each cold (a fresh scratch dir, so no parsed-capture
 * cache) and then warm (the same scratch dir again: every capture's parsed rows cached, as in a
 * scheduled build over unchanged archives), and prints time and peak RSS of both; returns the last data dir.
 */
function benchBuild(): string {
  const times = { cold: [] as number[], warm: [] as number[] };
  const rss = { cold: [] as number[], warm: [] as number[] };
  let dataDir = "";
  for (let i = 0; i < RUNS; i++) {
    const scratch = tempDir("ballast-bench-scratch-");
    for (const k of ["cold", "warm"] as const) {
      dataDir = tempDir("ballast-bench-");
      const t0 = performance.now();
      const out = execFileSync("npx", ["tsx", "build/cli.ts", "build", "--report-rss"], {
        cwd: ROOT,
        env: { ...process.env, BALLAST_DATA_DIR: dataDir, BALLAST_SCRATCH_DIR: scratch, BALLAST_LOG: "silent" },
      }).toString();
      times[k].push((performance.now() - t0) / 1000);
      rss[k].push(Number(must(/maxRSS_KB (\d+)/.exec(out), "maxRSS_KB of the build")[1]) / 1024);
    }
  }
  console.log(`\nBuild from the recorded capture (${RUNS} runs, each cold then with the parsed-capture cache warm)`);
  console.log(
    table(
      ["metric", "median", "min", "max", "target"],
      [
        spread("build wall time, cold (s)", times.cold, 2, "≤ 60"),
        spread("build wall time, cache warm (s)", times.warm, 2, "≤ 60"),
        spread("build peak RSS, cold (MiB)", rss.cold, 0, "≤ 2048"),
        spread("build peak RSS, cache warm (MiB)", rss.warm, 0, "≤ 2048"),
      ],
    ),
  );
  return dataDir;
}

/** 2. Depeg detection over the whole recorded history, a fresh process per run (so RSS is its own). */
function benchDetection(): void {
  const det: {
    monitorMs: number;
    pegStageMs: number;
    riskStageMs: number;
    observations: number;
    slots: number;
    incidents: number;
    maxRssKb: number;
  }[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync("npx", ["tsx", "scripts/bench-detection.ts"], {
      cwd: ROOT,
      env: { ...process.env, BALLAST_LOG: "silent" },
    }).toString();
    const lines = out.trim().split("\n");
    det.push(JSON.parse(lines[lines.length - 1]));
  }
  console.log(
    `\nDepeg detection over all recorded history: ${det[0].observations} observations → ${det[0].slots} 15-minute slots → ${det[0].incidents} incidents (${RUNS} runs)`,
  );
  console.log(
    table(
      ["metric", "median", "min", "max", "target"],
      [
        spread(
          "consensus + detection (s)",
          det.map((d) => d.monitorMs / 1000),
          2,
          "≤ 10",
        ),
        spread(
          "+ peg scores + resolver (s)",
          det.map((d) => d.pegStageMs / 1000),
          2,
          "—",
        ),
        spread(
          "risk stage: DEWS, stability index, safety scores + daily history (s)",
          det.map((d) => d.riskStageMs / 1000),
          2,
          "≤ 15",
        ),
        spread(
          "process peak RSS (MiB)",
          det.map((d) => d.maxRssKb / 1024),
          0,
          "—",
        ),
      ],
    ),
  );
}

/** 2b. Markets stage over a build holding the recorded pool sample, a fresh process per run (≤ 10 s). */
function benchMarkets(): void {
  const runs: { marketsStageMs: number; pools: number; matches: number; maxRssKb: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync("npx", ["tsx", "scripts/bench/markets-stage.ts"], {
      cwd: ROOT,
      env: { ...process.env, BALLAST_LOG: "silent" },
    }).toString();
    const lines = out.trim().split("\n");
    runs.push(JSON.parse(lines[lines.length - 1]));
  }
  console.log(
    `\nMarkets stage as of 2026-09-03 (recorded yields sample: ${runs[0].pools} pools, ${runs[0].matches} pool tokens matched or recorded unmatched; ${RUNS} runs)`,
  );
  console.log(
    table(
      ["metric", "median", "min", "max", "target"],
      [
        spread(
          "markets stage: pools, matching, DEX liquidity, backstops, chain health, yields (s)",
          runs.map((r) => r.marketsStageMs / 1000),
          2,
          "≤ 10",
        ),
      ],
    ),
  );
}

/** 2c. Dated-snapshot backfill rate: `build --from --to` over two days of the SVB week into a fresh data dir, RUNS times. */
function benchBackfill(): void {
  const days = 2;
  const rates: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    execFileSync("npx", ["tsx", "build/cli.ts", "build", "--from", "2023-03-11", "--to", "2023-03-12"], {
      cwd: ROOT,
      env: { ...process.env, BALLAST_DATA_DIR: tempDir("ballast-bench-backfill-"), BALLAST_LOG: "silent" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    rates.push(days / ((performance.now() - t0) / 60_000));
  }
  console.log(`\nDated-snapshot backfill (${days} days per run, 2023-03-11 → 2023-03-12, ${RUNS} runs)`);
  console.log(
    table(
      ["metric", "median", "min", "max", "target"],
      [spread("backfill rate (snapshot-days per minute)", rates, 2, "—")],
    ),
  );
}

const startedAt = new Date();
console.log(`\nBallast benchmarks — ${startedAt.toISOString()}, nproc ${NPROC}`);
const dataDir = process.env.BENCH_DATA_DIR || benchBuild();
if (!process.env.BENCH_DATA_DIR) {
  benchDetection();
  benchMarkets();
  benchBackfill();
}

// 3. API vs nginx, PGlite state store.
const latest = JSON.parse(readFileSync(join(dataDir, "latest.json"), "utf8"));
const stablecoinIds = readdirSync(join(dataDir, "builds", latest.buildId, "site-data/supply-history"))
  .filter((f) => f.endsWith(".json"))
  .map((f) => f.slice(0, -".json".length)); // not the .gz/.br siblings
const nginxRoot = tempDir("ballast-nginx-root-");
const api = await startApi(dataDir);
const apiUrl = (path: string) => `http://127.0.0.1:${API_PORT}${path}`;
const nginxUrl = (path: string) => `http://127.0.0.1:${NGINX_PORT}${path}`;
const keyed = { "X-API-Key": api.key };
const gzipHeader = { "Accept-Encoding": "gzip" };

const small = await get(apiUrl(SMALL_ROUTE), keyed);
const list = await get(apiUrl(LIST_ROUTE), keyed);
const listGz = await get(apiUrl(LIST_ROUTE), { ...keyed, ...gzipHeader });
for (const [what, r] of [
  ["small route", small],
  ["list route", list],
  ["list route (gzip)", listGz],
] as const) {
  if (r.status !== 200) throw new Error(`API ${what} answered ${r.status}: ${r.body.toString().slice(0, 300)}`);
}
const apiCompresses = listGz.headers["content-encoding"] === "gzip";
writeFileSync(join(nginxRoot, "summary.json"), small.body);
/** A fresh API list body (identity) and its `gzip -9` sibling in the nginx root. */
const refreshList = async () => {
  const fresh = await get(apiUrl(LIST_ROUTE), keyed);
  writeAtomic(join(nginxRoot, "stablecoins.json.gz"), gzipSync(fresh.body, { level: 9 }));
  writeAtomic(join(nginxRoot, "stablecoins.json"), fresh.body);
};
await refreshList();
const nginx = await startNginx(nginxRoot, "/summary.json");
const nginxSmall = await get(nginxUrl("/summary.json"));
const nginxList = await get(nginxUrl("/stablecoins.json"));
const nginxListGz = await get(nginxUrl("/stablecoins.json"), gzipHeader);
if (!nginxSmall.body.equals(small.body)) throw new Error("nginx does not serve the API's summary bytes");
if (nginxListGz.headers["content-encoding"] !== "gzip")
  throw new Error("nginx did not serve the .gz sibling (gzip_static)");
// The ceiling of one Node process here: a bare node:http server given the same requests and answering
// the API's own headers and bytes, pinned like the API.
const bare = await startBareNode(tempDir("ballast-bare-"), {
  "/small": small,
  "/list": list,
  "/list-gzip": listGz,
});
const bareUrl = (path: string) => ({ url: `http://127.0.0.1:${BARE_PORT}${path}`, headers: keyed });
const smallCase = await compare({ url: apiUrl(SMALL_ROUTE), headers: keyed }, bareUrl("/small"), {
  url: nginxUrl("/summary.json"),
  headers: {},
});
const listCase = await compare(
  { url: apiUrl(LIST_ROUTE), headers: keyed },
  bareUrl("/list"),
  { url: nginxUrl("/stablecoins.json"), headers: {} },
  refreshList,
);
const gzipCase = await compare(
  { url: apiUrl(LIST_ROUTE), headers: { ...keyed, ...gzipHeader } },
  { ...bareUrl("/list-gzip"), headers: { ...keyed, ...gzipHeader } },
  { url: nginxUrl("/stablecoins.json"), headers: gzipHeader },
  refreshList,
);
await bare.stop();
await nginx.stop();
// The embedded default (PGlite), as `make run` starts it: RSS after ≥ 100k unique URLs too.
const embeddedRun = { ...(await uniqueUrlLoad(api, stablecoinIds, UNIQUE_URLS)), endRssMB: api.rssMB() };
await api.stop();

// Memory under abuse: a fresh `make run` server (PGlite), scripts/bench/abuse-memory.ts pinned to core 1.
const ABUSE_REQUESTS = 100_000;
const abuseApi = await startApi(dataDir);
const [abuseCmd, abuseArgs] = pinned(1, "npx", [
  "tsx",
  join(BENCH_DIR, "abuse-memory.ts"),
  `http://127.0.0.1:${API_PORT}`,
  abuseApi.key,
  String(ABUSE_REQUESTS),
  "32",
  ...stablecoinIds.slice(0, 40),
]);
const abuseOut = (await promisify(execFile)(abuseCmd, abuseArgs, { cwd: ROOT, maxBuffer: 16 << 20 })).stdout;
const abuse = {
  ...(JSON.parse(abuseOut.trim().split("\n").pop() ?? "{}") as {
    requests: number;
    seconds: number;
    statuses: Record<string, number>;
    errors: Record<string, number>;
    oversized: number;
    oversizedAnsweredEarly: number;
  }),
  startRssMB: abuseApi.startRssMB,
  endRssMB: abuseApi.rssMB(),
};
await abuseApi.stop();

// 4. Postgres state store: RSS at start and after ≥ 100k unique URLs.
const pgRun = await withPgSchema(async (url) => {
  const pgApi = await startApi(dataDir, { DATABASE_URL: url, API_KEY_PEPPER: randomBytes(16).toString("hex") });
  try {
    const load = await uniqueUrlLoad(pgApi, stablecoinIds, UNIQUE_URLS);
    return { startRssMB: pgApi.startRssMB, endRssMB: pgApi.rssMB(), ...load };
  } finally {
    await pgApi.stop();
  }
});
agent.destroy();

// Report.
/** Flags of a measurement: `invalid` ones (wrong answers, missing feature) make "met?" no; the others are shown. */
interface Flags {
  invalid: string[];
  info: string[];
}
const apiFlags = (s: SideStats): Flags => ({
  invalid: s.non2xx || s.socketErrors ? [`INVALID (API: ${s.non2xx} non-2xx, ${s.socketErrors} socket errors)`] : [],
  info: s.timeouts ? [`${s.timeouts} API requests > 2 s (wrk timeouts)`] : [],
});
const met = (ok: boolean, f: Flags) => {
  const text = [...f.invalid, ...f.info].join("; ");
  return `${ok && !f.invalid.length ? "yes" : "no"}${text ? ` — ${text}` : ""}`;
};
const spreadOf = (xs: number[]) =>
  `${median(xs).toFixed(2)}× [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`;
/** Target of API/bare Node at the median on every row (issue 30 item 10). */
const BARE_TARGET = 0.9;
const ratioRow = (
  measure: string,
  c: Awaited<ReturnType<typeof compare>>,
  target: number,
  extraInvalid: string[] = [],
) => {
  const f = apiFlags(c.api);
  const okNginx = median(c.ratios) >= target;
  const okBare = median(c.bareRatios) >= BARE_TARGET;
  return [
    measure,
    int(c.api.rps),
    int(c.bare.rps),
    int(c.nginx.rps),
    spreadOf(c.ratios),
    spreadOf(c.bareRatios),
    spreadOf(c.bareNginxRatios),
    `≥ ${target}× nginx; ≥ ${BARE_TARGET}× bare Node`,
    met(okNginx && okBare, {
      ...f,
      invalid: [...f.invalid, ...extraInvalid],
      info: [
        ...f.info,
        ...(okNginx ? [] : ["below the nginx target"]),
        ...(okBare ? [] : ["below the bare-Node target"]),
      ],
    }),
  ];
};
const absRow = (
  measure: string,
  value: number,
  nginxValue: string,
  target: number | null,
  unit: string,
  f: Flags = { invalid: [], info: [] },
) => [
  measure,
  value.toFixed(unit === "ms" ? 2 : 0),
  nginxValue,
  "—",
  target === null ? "—" : `≤ ${target} ${unit}`,
  target === null ? "—" : met(value <= target, f),
];
const bytesRow = (measure: string, a: number, n: number, flag = "") => [
  measure,
  int(a),
  int(n),
  `${(a / n).toFixed(2)}×`,
  "—",
  flag || "—",
];
const notCompressed = apiCompresses ? "" : "NOT COMPRESSED (API ignored Accept-Encoding: gzip)";
const uniqueFlagsOf = (run: Awaited<ReturnType<typeof uniqueUrlLoad>>): Flags => ({
  invalid: [
    run.requests < UNIQUE_URLS ? `INVALID: only ${int(run.requests)} requests` : "",
    run.non2xx || run.socketErrors ? `INVALID: ${int(run.non2xx)} non-2xx, ${run.socketErrors} socket errors` : "",
  ].filter(Boolean),
  info: run.timeouts ? [`${run.timeouts} requests > 2 s (wrk timeouts)`] : [],
});
const uniqueFlags = uniqueFlagsOf(pgRun);

console.log(
  `\nAPI vs a bare node:http server and nginx (1 worker, sendfile, gzip_static, no extra headers) serving the same bytes — wrk -t1 -c50, ${WARMUP_SECONDS} s warm-up per side, ${RUNS} rounds of ${SLICES} turns of ${SLICE_SECONDS} s runs per side, then one 8 s run per side for latency; ratios per round: median [min–max]`,
);
console.log(
  `API started as \`make run\` starts it: \`npx tsx ${apiEntry} --dev-key\` (tsx, not compiled), PORT=${API_PORT}, DEV_KEY_RATE_LIMIT=1e9 (raised so the load meets no 429), BALLAST_LOG=${process.env.BALLAST_LOG ?? "info"}; ${PIN ? "servers pinned to core 0, wrk to core 1" : "unpinned"}; load average at end ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
);
console.log(
  table(
    ["measure (req/s)", "API", "bare Node", "nginx", "API/nginx", "API/bare Node", "bare Node/nginx", "target", "met?"],
    [
      ratioRow(`small route (\`${SMALL_ROUTE}\`, keyed)`, smallCase, 0.75),
      ratioRow(`list route (\`${LIST_ROUTE}\`), identity`, listCase, 0.5),
      ratioRow("list route, `Accept-Encoding: gzip`", gzipCase, 0.75, notCompressed ? [notCompressed] : []),
    ],
  ),
);
const abuseFlags: Flags = {
  invalid: abuse.requests < ABUSE_REQUESTS ? [`INVALID: only ${int(abuse.requests)} requests`] : [],
  info: [
    `statuses ${Object.entries(abuse.statuses)
      .map(([k, v]) => `${k}: ${int(v)}`)
      .join(", ")}; ${abuse.oversized} oversized bodies (${abuse.oversizedAnsweredEarly} answered before fully sent)${
      Object.keys(abuse.errors).length
        ? `; client socket errors ${Object.entries(abuse.errors)
            .map(([k, v]) => `${k}: ${v}`)
            .join(", ")}`
        : ""
    }; ${abuse.seconds.toFixed(0)} s`,
  ],
};
console.log(
  table(
    ["measure", "API", "nginx", "ratio", "target", "met?"],
    [
      absRow(
        "small-route p99 at 50 connections (ms)",
        smallCase.api.p99,
        smallCase.nginx.p99.toFixed(2),
        10,
        "ms",
        apiFlags(smallCase.api),
      ),
      absRow(
        `server RSS after ${int(pgRun.requests)} unique URLs, Postgres state store (MB)`,
        pgRun.endRssMB,
        "—",
        300,
        "MB",
        uniqueFlags,
      ),
      absRow(
        `server RSS after ${int(embeddedRun.requests)} unique URLs, PGlite state store (embedded default) (MB)`,
        embeddedRun.endRssMB,
        "—",
        300,
        "MB",
        uniqueFlagsOf(embeddedRun),
      ),
      absRow(
        `server RSS after a ${int(abuse.requests)}-request abuse mix (scripts/bench/abuse-memory.ts: random GETs and POSTs, bodies up to 6 MB, 32 at a time), PGlite, fresh server (MB)`,
        abuse.endRssMB,
        "—",
        300,
        "MB",
        abuseFlags,
      ),
      absRow("server RSS at start, PGlite state store (MB)", api.startRssMB, "—", null, "MB"),
      absRow("server RSS at start of the abuse mix, PGlite state store (MB)", abuse.startRssMB, "—", null, "MB"),
      absRow("server RSS at start, Postgres state store (MB)", pgRun.startRssMB, "—", null, "MB"),
      bytesRow("small body bytes", small.body.length, nginxSmall.body.length),
      bytesRow("list body bytes, identity", list.body.length, nginxList.body.length),
      bytesRow(
        "list body bytes, gzip",
        listGz.body.length,
        nginxListGz.body.length,
        notCompressed ? "API: NOT COMPRESSED" : `API ${listGz.headers["content-encoding"]}, nginx .gz (zlib level 9)`,
      ),
    ],
  ),
);

console.log("\nPer route (req/s: median [min–max]; latency ms: one 8 s run after the rounds)");
const detail = (route: string, c: { api: SideStats; bare: SideStats; nginx: SideStats }) =>
  (
    [
      ["API", c.api],
      ["bare Node", c.bare],
      ["nginx", c.nginx],
    ] as const
  ).map(([side, s]) => [
    route,
    side,
    `${int(s.rps)} [${int(s.rpsMin)}–${int(s.rpsMax)}]`,
    s.p50.toFixed(2),
    s.p99.toFixed(2),
    String(s.non2xx),
    `${s.socketErrors} / ${s.timeouts}`,
  ]);
console.log(
  table(
    ["route", "side", "req/s", "p50", "p99", "non-2xx", "socket errors / timeouts"],
    [
      ...detail("small (summary)", smallCase),
      ...detail("list, identity", listCase),
      ...detail(`list, gzip${notCompressed ? " (API NOT COMPRESSED)" : ""}`, gzipCase),
    ],
  ),
);

console.log(
  `\nUnique URLs (Postgres state store, scripts/bench/unique-urls.lua over depeg-events, supply-history, non-usd-share, events): ` +
    `${int(pgRun.requests)} requests in ${pgRun.seconds.toFixed(1)} s (${int(pgRun.requests / pgRun.seconds)} req/s, ${pgRun.runs} wrk run${pgRun.runs > 1 ? "s" : ""}), ` +
    `${int(pgRun.non2xx)} non-2xx, ${pgRun.socketErrors} socket errors, ${pgRun.timeouts} timeouts (> 2 s); RSS ${pgRun.startRssMB.toFixed(0)} MB at start → ${pgRun.endRssMB.toFixed(0)} MB`,
);
console.log(
  `Targets: API ≥ 0.75× nginx (small route), ≥ 0.5× (list, identity), ≥ 0.75× (list, gzip), and ≥ ${BARE_TARGET}× the bare node:http ceiling on every row; small-route p99 ≤ 10 ms; RSS after 100k unique URLs and after the 100k-request abuse mix ≤ 300 MB. RSS is VmRSS of the server process (tsx's child, not npx) in MB (10^6 bytes).`,
);
if (process.env.BENCH_API_ONLY === "1") {
  for (const n of notes) console.log(`Note: ${n}`);
  console.log(
    `BENCH_API_ONLY=1: stopped after the API section (${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s)`,
  );
  process.exit(0);
}
// 4. On-chain: ingestion throughput from a real node, /api/blacklist paging over 100k and 1M synthetic rows (each in its own process).
const runJson = <T>(script: string): T =>
  JSON.parse(
    execFileSync("npx", ["tsx", script], {
      cwd: ROOT,
      env: { ...process.env, BALLAST_LOG: "silent" },
      maxBuffer: 64 << 20,
    }).toString(),
  );
const ingest = runJson<{ logs: number; seconds: number; logsPerSec: number }>("scripts/bench/onchain-ingest.ts");
/** /api/blacklist bench of one synthetic ledger size (scripts/bench/blacklist-latency.ts, medians over its serving processes): the fields read here. */
type BlacklistBench = Pick<
  BlacklistLatencyResult,
  | "rows"
  | "runs"
  | "pages"
  | "p50Ms"
  | "p99Ms"
  | "maxMs"
  | "cpuP50Ms"
  | "cpuP99Ms"
  | "loadAverage"
  | "totalExactMs"
  | "firstRequestMs"
  | "heapBeforeMB"
  | "heapAfterMB"
  | "arrayBuffersAfterMB"
  | "rssAfterMB"
  | "setupMs"
  | "layoutBytes"
>;
const blacklistAt = (rows: number, maxPages?: number): BlacklistBench =>
  JSON.parse(
    execFileSync(
      "npx",
      [
        "tsx",
        "scripts/bench/blacklist-latency.ts",
        "--rows",
        String(rows),
        ...(maxPages ? ["--max-pages", String(maxPages)] : []),
      ],
      {
        cwd: ROOT,
        env: { ...process.env, BALLAST_LOG: "silent", NODE_OPTIONS: "--max-old-space-size=8192" },
        maxBuffer: 64 << 20,
      },
    ).toString(),
  );
const bl100k = blacklistAt(100_000);
const bl1m = blacklistAt(1_000_000, 60);
console.log(
  `\nOn-chain (scripts/bench/onchain-ingest.ts: anvil, ${int(ingest.logs)} events, real decode + ledger commits, median of 3; scripts/bench/blacklist-latency.ts: SYNTHETIC ledgers (never published), the serving layout read by the real app behind node:http in its own process, server time per page (arrival → last byte to the socket), identity encoding, 1000 rows per page; medians of ${bl100k.runs} fresh serving processes per size; mix: cursor walks of 8 sort orders and 4 filters (stablecoin, chainId+eventType, q, chain+sort) from the first page (every page at 100k, 60 per walk at 1M) and 10 pages from the middle of each, after a warm-up of 23 pages)`,
);
const bl = (b: BlacklistBench, label: string) => [
  [`/api/blacklist page p50 at ${label} (ms, ${int(b.pages)} pages per run)`, b.p50Ms.toFixed(1), "—", "—"],
  [`/api/blacklist p99 at ${label} (ms)`, b.p99Ms.toFixed(1), "≤ 50", b.p99Ms <= 50 ? "yes" : "**no**"],
  [`/api/blacklist page max at ${label} (ms)`, b.maxMs.toFixed(1), "—", "—"],
  [
    `/api/blacklist server CPU per page at ${label} (ms, p50 / p99; load average ${b.loadAverage.join(" ")})`,
    `${b.cpuP50Ms.toFixed(1)} / ${b.cpuP99Ms.toFixed(1)}`,
    "—",
    "—",
  ],
  [
    `/api/blacklist first request at ${label} (ms: manifest, index read, one row)`,
    b.firstRequestMs.toFixed(1),
    "≤ 200",
    b.firstRequestMs <= 200 ? "yes" : "**no**",
  ],
  [`/api/blacklist includeTotal=true at ${label} (ms)`, b.totalExactMs.toFixed(1), "—", "—"],
  [
    `/api/blacklist server heap at ${label} (MB: before first request → after the mix; off-heap buffers; RSS)`,
    `${b.heapBeforeMB} → ${b.heapAfterMB}; ${b.arrayBuffersAfterMB}; ${b.rssAfterMB}`,
    "—",
    "—",
  ],
];
console.log(
  table(
    ["measure", "value", "target", "met?"],
    [
      ["ingestion: logs decoded and committed per second", int(ingest.logsPerSec), "—", "—"],
      ...bl(bl100k, "100k"),
      ...bl(bl1m, "1M"),
    ],
  ),
);
console.log(
  `Synthetic layouts: 100k ${(bl100k.layoutBytes.events / 1e6).toFixed(0)} MB events + ${(bl100k.layoutBytes.index / 1e6).toFixed(1)} MB index + ${(bl100k.layoutBytes.addresses / 1e6).toFixed(1)} MB addresses; 1M ${(bl1m.layoutBytes.events / 1e6).toFixed(0)} MB + ${(bl1m.layoutBytes.index / 1e6).toFixed(1)} MB + ${(bl1m.layoutBytes.addresses / 1e6).toFixed(1)} MB. Load average after: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
);

// 5. Key lane: auth overhead and 429 exactness across 2 instances sharing Postgres and Redis.
const auth = JSON.parse(
  execFileSync("npx", ["tsx", "scripts/bench/auth-quota.ts", dataDir], {
    cwd: ROOT,
    env: { ...process.env, BALLAST_LOG: "silent" },
    maxBuffer: 16 << 20,
  }).toString(),
) as {
  keyedRps: number;
  exemptRps: number;
  ratio: number;
  keyedRoute: string;
  exemptRoute: string;
  keyedBytes: number;
  exemptBytes: number;
  quota: {
    keys: number;
    limit: number;
    requests: number;
    seconds: number;
    exactKeys: number;
    min200: number;
    max200: number;
    otherStatuses: number;
  };
};
const q = auth.quota;
console.log(
  `\nKey lane (scripts/bench/auth-quota.ts: wrk -t1 -c50, 3 alternating runs, medians, unpinned; 2 in-process instances sharing Postgres and Redis)`,
);
console.log(
  table(
    ["measure", "value", "target", "met?"],
    [
      [`keyed route req/s (\`${auth.keyedRoute}\`, ${int(auth.keyedBytes)} B)`, int(auth.keyedRps), "—", "—"],
      [`exempt route req/s (\`${auth.exemptRoute}\`, ${int(auth.exemptBytes)} B)`, int(auth.exemptRps), "—", "—"],
      ["auth overhead ratio (keyed / exempt req/s)", `${auth.ratio.toFixed(2)}×`, "—", "—"],
      [
        `429 exactness: keys granted exactly ${q.limit} of ${int(q.requests / q.keys)} (${int(q.requests)} requests, ${q.keys} keys, ${q.seconds.toFixed(1)} s)`,
        `${q.exactKeys} / ${q.keys} (200s per key ${q.min200}–${q.max200}; ${q.otherStatuses} other statuses)`,
        `${q.keys} / ${q.keys}`,
        q.exactKeys === q.keys && q.otherStatuses === 0 ? "yes" : "**no**",
      ],
    ],
  ),
);

// 6. Fault latency: the speed claims moved out of the fault tests (the script prints its own table).
execFileSync("npx", ["tsx", "scripts/bench/fault-latency.ts", dataDir], {
  cwd: ROOT,
  env: { ...process.env, BALLAST_LOG: "silent" },
  stdio: ["ignore", "inherit", "inherit"],
});

// 7. Scale check: build and detection at 10× the recorded history (a SYNTHETIC replay, not data; the script prints its own tables).
if (process.env.BENCH_SCALE !== "0")
  execFileSync("npx", ["tsx", "scripts/bench/scale.ts"], {
    cwd: ROOT,
    env: { ...process.env, BALLAST_LOG: "silent" },
    stdio: ["ignore", "inherit", "inherit"],
  });

for (const n of notes) console.log(`Note: ${n}`);
console.log(`Total bench time ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s`);
process.exit(0);
