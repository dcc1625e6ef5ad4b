/**
 * `make bench`: prints a table of build time / peak RSS from the recorded capture and API
 * depeg detection over all recorded history (time, peak RSS; target ≤ 10 s), and API
 * throughput / latency against nginx serving the same bytes, medians of 3 alternating runs.
 * Needs Debian's nginx and wrk (installed here when missing). Targets: build ≤ 60 s and ≤ 2 GiB;
 * API ≥ 0.5× nginx on the small route. nginx runs one worker, matching the single Node process.
 */
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startServer } from "../api/server.ts";

const ROOT = resolve(import.meta.dirname, "..");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const have = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;

if (!have("wrk") || !have("nginx")) {
  process.stderr.write("installing nginx and wrk from Debian packages…\n");
  execFileSync("sh", ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx wrk"], { stdio: "inherit" });
}

// 1. Build from the recorded capture.
const buildTimes: number[] = [];
const rss: number[] = [];
let dataDir = "";
for (let i = 0; i < 3; i++) {
  dataDir = mkdtempSync(join(tmpdir(), "ballast-bench-"));
  const t0 = performance.now();
  const out = execFileSync("npx", ["tsx", "build/cli.ts", "build", "--report-rss"], { cwd: ROOT, env: { ...process.env, BALLAST_DATA_DIR: dataDir, BALLAST_LOG: "silent" } }).toString();
  buildTimes.push((performance.now() - t0) / 1000);
  rss.push(Number(/maxRSS_KB (\d+)/.exec(out)![1]) / 1024);
}

// 2. Depeg detection over the whole recorded history (fresh process per run, so RSS is its own).
const det: { monitorMs: number; pegStageMs: number; observations: number; slots: number; incidents: number; maxRssKb: number }[] = [];
for (let i = 0; i < 3; i++) {
  const out = execFileSync("npx", ["tsx", "scripts/bench-detection.ts"], { cwd: ROOT, env: { ...process.env, BALLAST_LOG: "silent" } }).toString();
  det.push(JSON.parse(out.trim().split("\n").at(-1)!));
}

// 3. API vs nginx on loopback, 50 connections.
const API_PORT = 18790;
const NGINX_PORT = 18791;
const api = await startServer({ PORT: API_PORT, HOST: "127.0.0.1", BALLAST_DATA_DIR: dataDir, CLOCK: "auto" }, { devKey: true, devKeyLimitPerMinute: 2_000_000_000 });
const latest = JSON.parse(execFileSync("cat", [join(dataDir, "latest.json")]).toString());
const buildDir = join(dataDir, "builds", latest.buildId);
// nginx serves the exact bytes the API returns for the summary route, and the published list file.
const summary = await (await fetch(`http://127.0.0.1:${API_PORT}/api/stablecoin-summary/usdt-tether`, { headers: { "X-API-Key": api.devKey! } })).text();
writeFileSync(join(buildDir, "usdt-tether-summary.json"), summary);
const nginxDir = mkdtempSync(join(tmpdir(), "ballast-nginx-"));
writeFileSync(join(nginxDir, "nginx.conf"), `user root; worker_processes 1; daemon off; pid ${nginxDir}/nginx.pid; error_log ${nginxDir}/error.log;
events { worker_connections 1024; }
http { access_log off; types { application/json json; } server { listen 127.0.0.1:${NGINX_PORT}; root ${buildDir};
  location / { add_header X-Data-Age 0; } } }`);
const nginx = spawn("nginx", ["-c", join(nginxDir, "nginx.conf"), "-p", nginxDir], { stdio: "ignore" });
await new Promise((r) => setTimeout(r, 800));

/** Runs wrk without blocking the event loop (the API under test runs in this process). */
async function wrk(url: string, key?: string) {
  const args = ["-t1", "-c50", "-d8s", "--latency", ...(key ? ["-H", `X-API-Key: ${key}`] : []), url];
  const out = (await promisify(execFile)("wrk", args)).stdout;
  const unit = (v: string, u: string) => Number(v) * (u === "us" ? 0.001 : u === "s" ? 1000 : 1);
  const p = (q: string) => { const m = new RegExp(`${q}%\\s+([\\d.]+)(us|ms|s)`).exec(out)!; return unit(m[1], m[2]); };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]), p50: p("50"), p99: p("99"), non2xx };
}

const cases = [
  { name: "summary (small)", api: `/api/stablecoin-summary/usdt-tether`, nginx: "/usdt-tether-summary.json" },
  { name: "stablecoins (list)", api: `/api/stablecoins`, nginx: "/site-data/stablecoins.json" },
];
const rows: string[][] = [];
for (const c of cases) {
  const a: Awaited<ReturnType<typeof wrk>>[] = [];
  const n: Awaited<ReturnType<typeof wrk>>[] = [];
  for (let i = 0; i < 3; i++) {
    a.push(await wrk(`http://127.0.0.1:${API_PORT}${c.api}`, api.devKey));
    n.push(await wrk(`http://127.0.0.1:${NGINX_PORT}${c.nginx}`));
  }
  const ar = median(a.map((x) => x.rps));
  const nr = median(n.map((x) => x.rps));
  rows.push([c.name, ar.toFixed(0), median(a.map((x) => x.p50)).toFixed(2), median(a.map((x) => x.p99)).toFixed(2), nr.toFixed(0),
    median(n.map((x) => x.p50)).toFixed(2), median(n.map((x) => x.p99)).toFixed(2), (ar / nr).toFixed(2), `${a.reduce((s, x) => s + x.non2xx, 0)} / ${n.reduce((s, x) => s + x.non2xx, 0)}`]);
}
nginx.kill();
await api.close();

const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
console.log("\nBuild from the recorded capture (3 runs)");
console.log(line(["metric", "median", "min", "max", "target"]));
console.log(line(["---", "---", "---", "---", "---"]));
console.log(line(["build wall time (s)", median(buildTimes).toFixed(2), Math.min(...buildTimes).toFixed(2), Math.max(...buildTimes).toFixed(2), "≤ 60"]));
console.log(line(["build peak RSS (MiB)", median(rss).toFixed(0), Math.min(...rss).toFixed(0), Math.max(...rss).toFixed(0), "≤ 2048"]));
console.log(`\nDepeg detection over all recorded history: ${det[0].observations} observations → ${det[0].slots} 15-minute slots → ${det[0].incidents} incidents (3 runs)`);
console.log(line(["metric", "median", "min", "max", "target"]));
console.log(line(["---", "---", "---", "---", "---"]));
const dm = det.map((d) => d.monitorMs / 1000);
const ds = det.map((d) => d.pegStageMs / 1000);
const dr = det.map((d) => d.maxRssKb / 1024);
console.log(line(["consensus + detection (s)", median(dm).toFixed(2), Math.min(...dm).toFixed(2), Math.max(...dm).toFixed(2), "≤ 10"]));
console.log(line(["+ peg scores + resolver (s)", median(ds).toFixed(2), Math.min(...ds).toFixed(2), Math.max(...ds).toFixed(2), "—"]));
console.log(line(["process peak RSS (MiB)", median(dr).toFixed(0), Math.min(...dr).toFixed(0), Math.max(...dr).toFixed(0), "—"]));
console.log("\nAPI (keyed, 50 connections, wrk 8 s × 3, medians) vs nginx (1 worker) serving the same bytes");
console.log(line(["route", "API req/s", "API p50 ms", "API p99 ms", "nginx req/s", "nginx p50 ms", "nginx p99 ms", "API/nginx", "non-2xx API / nginx"]));
console.log(line(Array(9).fill("---")));
for (const r of rows) console.log(line(r));
console.log("\ntarget: API/nginx ≥ 0.5 on the small route");
process.exit(0);
