/**
 * Scale check (issue 21 item 8): the build and depeg detection at 10× the recorded history against 1×.
 * The 10× input is SYNTHETIC, not data: scripts/bench/scale-history.ts replays every time-series
 * archive the build reads 9 more times, shifted back in time by k × the file's span, into a temp
 * capture directory (snapshots symlinked), so the history ends where the recording ends and a build
 * as of the recorded as-of (2025-09-07) reads 10× the rows. Builds go to temp data dirs; all temp
 * dirs are deleted at exit; nothing is published outside them.
 *
 * Per scale, each in its own process (so peak RSS is that run's):
 * - build: `build/cli.ts build --report-rss` (BALLAST_CAPTURE_DIR, fresh BALLAST_DATA_DIR), wall time
 *   and maxRSS, BENCH_SCALE_RUNS runs (default 3; median; 1× and 10× alternate), each run cold (fresh
 *   BALLAST_SCRATCH_DIR: no parsed-capture cache) then warm (same scratch dir: every capture's parsed rows
 *   cached, as for a scheduled build over unchanged archives); the manifest's history-table rows (cold runs);
 * - detection: scripts/bench-detection.ts (the `make bench` detection row: consensus + detection, peg
 *   stage, risk stage, peak RSS);
 * - profile: this script with `--probe <captureDir>`: load stage, then every model of the DAG one by
 *   one (asserts left out), wall time per node, printed as JSON lines as they finish, so a model that
 *   fails or runs long is still named.
 * Targets: build and detection ≤ 60 s and ≤ 2 GiB at 10×; every measure's 10×/1× ratio ≤ 10 (no worse than linear).
 * A run that fails or passes BENCH_SCALE_TIMEOUT_S (default 900 s) is reported as such (the table says
 * which), and the profile names the stages that grow.
 * Usage: `npx tsx scripts/bench/scale.ts` (also run by `make bench`). BENCH_SCALE_FACTOR (default 10).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { makeSyntheticCaptureDir } from "./scale-history.ts";
import { must } from "../../lib/must.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const RECORDED = process.env.BALLAST_CAPTURE_DIR || resolve(ROOT, "../shared/data");
const FACTOR = Number(process.env.BENCH_SCALE_FACTOR ?? 10);
const RUNS = Number(process.env.BENCH_SCALE_RUNS ?? 3);
const TIMEOUT_MS = Number(process.env.BENCH_SCALE_TIMEOUT_S ?? 900) * 1000;
const AS_OF = "2025-09-07T00:00:00Z";
const GIB_KB = 1024 * 1024;

// ---- child mode: load + every model one by one, timings as JSON lines on stdout -------------------------------
if (process.argv[2] === "--probe") {
  process.env.BALLAST_LOG ??= "silent";
  const { Db } = await import("../../build/duckdb.ts");
  const { loadInputs } = await import("../../build/stages/load.ts");
  const { discoverModels, runModels } = await import("../../build/models.ts");
  const { ANALYTICS } = await import("../../pipelines/analytics/analytics.ts");
  const emit = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const { BUILD_DB_MEMORY_LIMIT } = await import("../../build/stages/model.ts");
  const { applyHeapGrowingPercent } = await import("../../lib/heap-growth.ts");
  const { loadBuildConfig } = await import("../../build/config.ts");
  applyHeapGrowingPercent(loadBuildConfig().BALLAST_HEAP_GROWING_PERCENT); // as build/cli.ts does
  const db = await Db.open(":memory:", { threads: "1", memory_limit: BUILD_DB_MEMORY_LIMIT }); // as loadAndModel opens it
  let t0 = performance.now();
  await loadInputs(db, { asOf: Date.parse(AS_OF) / 1000, captureDir: process.argv[3] });
  emit({
    node: "load stage (collect + parse + load captures, registry)",
    ms: performance.now() - t0,
    rssKb: process.resourceUsage().maxRSS,
  });
  for (const m of discoverModels(join(ROOT, "pipelines/models"), ANALYTICS)) {
    t0 = performance.now();
    try {
      const r = await runModels(db, [{ ...m, asserts: [] }]);
      emit({
        node: m.name,
        ms: performance.now() - t0,
        rows: r.tables.reduce((s, t) => s + t.rows, 0),
        rssKb: process.resourceUsage().maxRSS,
      });
    } catch (err) {
      emit({
        node: m.name,
        ms: performance.now() - t0,
        error: (err as Error).message.slice(0, 300),
        rssKb: process.resourceUsage().maxRSS,
      });
      break;
    }
  }
  db.close();
  process.exit(0);
}

// ---- parent ----------------------------------------------------------------------------------------------------
const tempDirs: string[] = [];
const live = new Set<number>();
process.on("exit", () => {
  for (const pid of live) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => process.exit(130));
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(d);
  return d;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
const table = (head: string[], rows: string[][]) =>
  [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const int = (n: number) => Math.round(n).toLocaleString("en-US");

interface Run {
  ok: boolean;
  ms: number;
  stdout: string;
  stderr: string;
  why: string;
}
/** Runs `npx tsx <args>` in its own process group; kills the group after TIMEOUT_MS. */
function run(args: string[], env: Record<string, string>, onLine?: (l: string) => void): Promise<Run> {
  return new Promise((done) => {
    const t0 = performance.now();
    const child = spawn("npx", ["tsx", ...args], {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, BALLAST_LOG: "silent", ...env },
    });
    // pid is undefined only when the spawn failed ('close' follows with an error code).
    const pid = child.pid;
    if (pid !== undefined) live.add(pid);
    let stdout = "",
      stderr = "",
      partial = "",
      timedOut = false;
    must(child.stdout, "child stdout (piped)").on("data", (d: Buffer) => {
      stdout += d;
      partial += d;
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines) onLine?.(l);
    });
    must(child.stderr, "child stderr (piped)").on("data", (d: Buffer) => {
      stderr = (stderr + d).slice(-20_000);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (pid !== undefined) process.kill(-pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }, TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (pid !== undefined) live.delete(pid);
      const ms = performance.now() - t0;
      const why = timedOut
        ? `killed after ${TIMEOUT_MS / 1000} s`
        : code === 0
          ? ""
          : `exit ${code ?? signal}: ${stderr
              .trim()
              .split("\n")
              .filter((l) => !l.startsWith("{"))
              .slice(-2)
              .join(" ")
              .slice(0, 300)}`;
      done({ ok: !timedOut && code === 0, ms, stdout, stderr, why });
    });
  });
}

interface BuildStat {
  ok: boolean;
  seconds: number;
  rssKb: number | null;
  why: string;
  models: Record<string, number>;
  sources: Record<string, number>;
  dropped: number;
  files: number;
}
/** One build of `captureDir` in its own process with scratch dir `scratchDir` (whose parsed-capture cache it uses). */
async function build(captureDir: string, scratchDir: string): Promise<BuildStat> {
  const dataDir = tempDir("ballast-scale-data-");
  const r = await run(["build/cli.ts", "build", "--report-rss"], {
    BALLAST_CAPTURE_DIR: captureDir,
    BALLAST_DATA_DIR: dataDir,
    BALLAST_SCRATCH_DIR: scratchDir,
    STORAGE_DRIVER: "fs",
  });
  const rss = /maxRSS_KB (\d+)/.exec(r.stdout);
  const stat: BuildStat = {
    ok: r.ok,
    seconds: r.ms / 1000,
    rssKb: rss ? Number(rss[1]) : null,
    why: r.why,
    models: {},
    sources: {},
    dropped: 0,
    files: 0,
  };
  if (r.ok) {
    const { buildId } = JSON.parse(readFileSync(join(dataDir, "latest.json"), "utf8")) as { buildId: string };
    const m = JSON.parse(readFileSync(join(dataDir, "builds", buildId, "manifest.json"), "utf8")) as {
      models: { name: string; rows: number }[];
      sources: { endpoint: string; rows: number; dropped: Record<string, number> }[];
      files: unknown[];
    };
    stat.models = Object.fromEntries(m.models.map((x) => [x.name, x.rows]));
    stat.sources = Object.fromEntries(m.sources.map((s) => [s.endpoint, s.rows]));
    stat.dropped = m.sources.reduce((s, x) => s + Object.values(x.dropped).reduce((a, b) => a + b, 0), 0);
    stat.files = m.files.length;
  }
  rmSync(dataDir, { recursive: true, force: true });
  return stat;
}

interface Detection {
  ok: boolean;
  why: string;
  monitorMs?: number;
  pegStageMs?: number;
  riskStageMs?: number;
  observations?: number;
  slots?: number;
  incidents?: number;
  maxRssKb?: number;
}
async function detection(captureDir: string): Promise<Detection> {
  const r = await run(["scripts/bench-detection.ts"], { BALLAST_CAPTURE_DIR: captureDir });
  if (!r.ok) return { ok: false, why: r.why };
  const lines = r.stdout.trim().split("\n");
  return { ok: true, why: "", ...JSON.parse(lines[lines.length - 1]) };
}

interface ProbeNode {
  node: string;
  ms: number;
  rows?: number;
  error?: string;
  rssKb: number;
}
async function probe(captureDir: string, label: string): Promise<{ nodes: ProbeNode[]; why: string }> {
  const nodes: ProbeNode[] = [];
  const r = await run(["scripts/bench/scale.ts", "--probe", captureDir], {}, (l) => {
    if (!l.startsWith("{")) return;
    const n = JSON.parse(l) as ProbeNode;
    nodes.push(n);
    if (n.ms > 10_000 || n.error)
      process.stderr.write(
        `  [${label} profile] ${n.node}: ${(n.ms / 1000).toFixed(1)} s${n.error ? ` — FAILED: ${n.error}` : ""}\n`,
      );
  });
  const failed = nodes.find((n) => n.error);
  return { nodes, why: failed ? `${failed.node} failed: ${failed.error}` : r.why };
}

// 1. The synthetic capture directory.
const startedAt = Date.now();
console.log(
  `\nScale check: build and detection at ${FACTOR}× the recorded history — SYNTHETIC, not data (issue 21 item 8); load average at start ${loadavg()}`,
);
const synth = makeSyntheticCaptureDir(RECORDED, FACTOR);
tempDirs.push(synth.dir);
const rowsIn = synth.files.reduce((s, f) => s + f.rowsIn, 0),
  rowsOut = synth.files.reduce((s, f) => s + f.rowsOut, 0);
console.log(
  `Synthetic capture dir ${synth.dir} (marked SYNTHETIC-NOT-DATA.md, deleted at exit): ${synth.files.length} time-series archives replayed ` +
    `${FACTOR}× (${int(rowsIn)} → ${int(rowsOut)} rows; each copy k = 1…${FACTOR - 1} shifted back k × the file's span; snapshots symlinked, ${synth.linked} files)`,
);
console.log(
  table(
    ["archive", "recorded rows", `${FACTOR}× rows`, "span (days)", `${FACTOR}× range`],
    synth.files.map((f) => [f.file, int(f.rowsIn), int(f.rowsOut), int(f.spanDays), `${f.from} → ${f.to}`]),
  ),
);

// 2. Measure: builds, detection and profile at 1× and at FACTOR×, alternating scales per round.
// Each run is cold (a fresh scratch dir: no parsed-capture cache), then warm (the same scratch dir again).
const builds: Record<"one" | "many", BuildStat[]> = { one: [], many: [] };
const warmBuilds: Record<"one" | "many", BuildStat[]> = { one: [], many: [] };
for (let i = 0; i < RUNS; i++) {
  for (const [k, dir] of [
    ["one", RECORDED],
    ["many", synth.dir],
  ] as const) {
    process.stderr.write(`scale: build ${k === "one" ? "1" : FACTOR}× run ${i + 1}/${RUNS}, cold then warm…\n`);
    const scratch = tempDir("ballast-scale-scratch-");
    builds[k].push(await build(dir, scratch));
    warmBuilds[k].push(await build(dir, scratch));
  }
}
process.stderr.write("scale: detection 1×, 10×…\n");
const det1 = await detection(RECORDED);
const detN = await detection(synth.dir);
process.stderr.write("scale: profile 1×, 10×…\n");
const prof1 = await probe(RECORDED, "1×");
const profN = await probe(synth.dir, `${FACTOR}×`);

// 3. Report.
const okRuns = (xs: BuildStat[]) => xs.filter((b) => b.ok);
const failNote = (xs: BuildStat[]) => {
  const f = xs.filter((b) => !b.ok);
  return f.length ? `${f.length}/${xs.length} runs FAILED (${f[0].why})` : "";
};
const b1 = okRuns(builds.one),
  bN = okRuns(builds.many);
type Cell = { v: number | null; note?: string };
const cellOf = (xs: BuildStat[], pick: (b: BuildStat) => number | null, all: BuildStat[]): Cell =>
  xs.length ? { v: median(xs.map(pick).filter((x): x is number => x !== null)) } : { v: null, note: failNote(all) };
const rows: string[][] = [];
const fmt = (c: Cell, digits: number) => (c.v === null ? `— ${c.note ?? "FAILED"}` : c.v.toFixed(digits));
/** A row: the 10× value against its absolute target (when given), and the ratio against linear growth. */
function row(measure: string, one: Cell, many: Cell, digits: number, absTarget: number | null, unit: string) {
  const ratio = one.v && many.v !== null ? many.v / one.v : null;
  const absOk = absTarget === null || (many.v !== null && many.v <= absTarget);
  const linOk = ratio !== null && ratio <= FACTOR;
  const target = `${absTarget === null ? "" : `≤ ${absTarget} ${unit} at ${FACTOR}×; `}ratio ≤ ${FACTOR}×`;
  const met =
    many.v === null
      ? "**no** (did not complete)"
      : absOk && linOk
        ? "yes"
        : `**no**${absOk ? "" : ` (${FACTOR}× above ${absTarget} ${unit})`}${linOk ? "" : " (worse than linear)"}`;
  rows.push([measure, fmt(one, digits), fmt(many, digits), ratio === null ? "—" : `${ratio.toFixed(2)}×`, target, met]);
}
const w1 = okRuns(warmBuilds.one),
  wN = okRuns(warmBuilds.many);
row(
  "build wall time, cold (s)",
  cellOf(b1, (b) => b.seconds, builds.one),
  cellOf(bN, (b) => b.seconds, builds.many),
  1,
  60,
  "s",
);
row(
  "build wall time, parsed-capture cache warm (s)",
  cellOf(w1, (b) => b.seconds, warmBuilds.one),
  cellOf(wN, (b) => b.seconds, warmBuilds.many),
  1,
  60,
  "s",
);
row(
  "build peak RSS, cold (MiB)",
  cellOf(b1, (b) => b.rssKb && b.rssKb / 1024, builds.one),
  cellOf(bN, (b) => b.rssKb && b.rssKb / 1024, builds.many),
  0,
  (GIB_KB * 2) / 1024,
  "MiB",
);
row(
  "build peak RSS, cache warm (MiB)",
  cellOf(w1, (b) => b.rssKb && b.rssKb / 1024, warmBuilds.one),
  cellOf(wN, (b) => b.rssKb && b.rssKb / 1024, warmBuilds.many),
  0,
  (GIB_KB * 2) / 1024,
  "MiB",
);
const detCell = (d: Detection, pick: (d: Detection) => number | undefined): Cell =>
  d.ok ? { v: pick(d) ?? null } : { v: null, note: `FAILED (${d.why})` };
/** `v / per` (a unit change), undefined when the run did not report `v`. */
const per = (v: number | undefined, divisor: number) => (v === undefined ? undefined : v / divisor);
row(
  "detection: consensus + detection (s)",
  detCell(det1, (d) => per(d.monitorMs, 1000)),
  detCell(detN, (d) => per(d.monitorMs, 1000)),
  2,
  null,
  "s",
);
row(
  "detection: + peg scores + resolver (s)",
  detCell(det1, (d) => per(d.pegStageMs, 1000)),
  detCell(detN, (d) => per(d.pegStageMs, 1000)),
  2,
  60,
  "s",
);
row(
  "risk stage: DEWS, stability index, safety scores (s)",
  detCell(det1, (d) => per(d.riskStageMs, 1000)),
  detCell(detN, (d) => per(d.riskStageMs, 1000)),
  2,
  null,
  "s",
);
row(
  "detection process peak RSS (MiB)",
  detCell(det1, (d) => per(d.maxRssKb, 1024)),
  detCell(detN, (d) => per(d.maxRssKb, 1024)),
  0,
  (GIB_KB * 2) / 1024,
  "MiB",
);
row(
  "price observations",
  detCell(det1, (d) => d.observations),
  detCell(detN, (d) => d.observations),
  0,
  null,
  "",
);
row(
  "15-minute consensus slots",
  detCell(det1, (d) => d.slots),
  detCell(detN, (d) => d.slots),
  0,
  null,
  "",
);
row(
  "depeg incidents",
  detCell(det1, (d) => d.incidents),
  detCell(detN, (d) => d.incidents),
  0,
  null,
  "",
);
console.log(
  `\nScale check — 1× recorded vs ${FACTOR}× SYNTHETIC (not data), as of ${AS_OF}; builds: ${RUNS} run${RUNS > 1 ? "s" : ""} per scale (median), each in its own process; load average now ${loadavg()}`,
);
console.log(table(["measure", "1×", `${FACTOR}×`, "ratio", "target", "met?"], rows));

// Manifest rows of the history tables (sanity: the 10× build counts more).
if (b1.length && bN.length) {
  const m1 = b1[b1.length - 1],
    mN = bN[bN.length - 1];
  const hist = Object.keys(m1.models)
    .filter((n) => /history|daily|prices|price_|supply|observations|slots|incidents|events|fx|rates/.test(n))
    .filter((n) => m1.models[n] > 0)
    .sort((a, b) => (mN.models[b] ?? 0) / m1.models[b] - (mN.models[a] ?? 0) / m1.models[a]);
  console.log(
    `\nManifest of the build as of ${AS_OF}: ${m1.files} → ${mN.files} files, malformed upstream values dropped ${int(m1.dropped)} → ${int(mN.dropped)}; rows per source and per history table (1× → ${FACTOR}×)`,
  );
  console.log(
    `(Above ${FACTOR}×: archives recorded past the as-of — e.g. the market-cap scrape to 2026-08 — have rows after the as-of that the build drops at 1×, while their shifted copies fall before it. Below: tables of current state, and safety_score_history, which keeps only changes within 3,650 days.)`,
  );
  console.log(
    table(
      ["table", "1× rows", `${FACTOR}× rows`, "ratio"],
      [
        ...Object.keys(m1.sources)
          .filter((s) => m1.sources[s] > 0)
          .map((s) => [
            `source ${s}`,
            int(m1.sources[s]),
            int(mN.sources[s] ?? 0),
            `${((mN.sources[s] ?? 0) / m1.sources[s]).toFixed(2)}×`,
          ]),
        ...hist.map((n) => [
          n,
          int(m1.models[n]),
          int(mN.models[n] ?? 0),
          `${((mN.models[n] ?? 0) / m1.models[n]).toFixed(2)}×`,
        ]),
      ],
    ),
  );
}

// Profile: which stages grow.
const t1 = new Map(prof1.nodes.map((n) => [n.node, n]));
const grown = profN.nodes
  .flatMap((n) => {
    const one = t1.get(n.node);
    return one ? [{ n, one }] : [];
  })
  .sort((a, b) => b.n.ms - b.one.ms - (a.n.ms - a.one.ms))
  .slice(0, 12);
const sum = (xs: ProbeNode[]) => xs.reduce((s, n) => s + n.ms, 0) / 1000;
/** Where the probe's peak RSS rose most (maxRSS after each node, MiB). */
const rssSteps = (xs: ProbeNode[]) =>
  xs.map((n, i) => ({ node: n.node, after: n.rssKb / 1024, rise: (n.rssKb - (i ? xs[i - 1].rssKb : 0)) / 1024 }));
const rssLine = (xs: ProbeNode[]) => {
  const st = rssSteps(xs);
  return `peak ${int(st.at(-1)?.after ?? 0)} MiB; rises: ${[...st]
    .sort((a, b) => b.rise - a.rise)
    .slice(0, 4)
    .map((x) => `${x.node} +${int(x.rise)}`)
    .join(", ")}`;
};
console.log(
  `\nProfile (this script --probe: load stage, then each DAG node alone, no asserts; one process per scale): load + model ${sum(prof1.nodes).toFixed(1)} s at 1×, ` +
    `${sum(profN.nodes).toFixed(1)} s at ${FACTOR}×${profN.why ? ` — ${FACTOR}× STOPPED: ${profN.why}` : ""}${prof1.why ? ` — 1× STOPPED: ${prof1.why}` : ""}; the nodes that grew most (s):`,
);
console.log(
  table(
    ["node", "1× (s)", `${FACTOR}× (s)`, "ratio", "rows 1× → 10×"],
    grown.map(({ n, one }) => [
      n.node,
      (one.ms / 1000).toFixed(2),
      `${(n.ms / 1000).toFixed(2)}${n.error ? " FAILED" : ""}`,
      `${(n.ms / Math.max(one.ms, 1)).toFixed(1)}×`,
      n.rows === undefined ? "—" : `${int(one.rows ?? 0)} → ${int(n.rows)}`,
    ]),
  ),
);
console.log(`Probe RSS (maxRSS after each node, MiB): 1× ${rssLine(prof1.nodes)}; ${FACTOR}× ${rssLine(profN.nodes)}.`);
if (b1.length && bN.length) {
  const emit1 = median(b1.map((b) => b.seconds)) - sum(prof1.nodes),
    emitN = median(bN.map((b) => b.seconds)) - sum(profN.nodes);
  if (!profN.why)
    console.log(
      `Emit + publish + process start (build wall − load − model): ${emit1.toFixed(1)} s at 1×, ${emitN.toFixed(1)} s at ${FACTOR}× (separate processes: approximate).`,
    );
}
console.log(
  `Scale check took ${((Date.now() - startedAt) / 1000).toFixed(0)} s; load average at end ${loadavg()}. The ${FACTOR}× capture dir was synthetic and is deleted now.`,
);
process.exit(0);
