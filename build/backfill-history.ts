import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { ENDPOINTS, SOURCE_BASE_URLS } from "../pipelines/sources/endpoints.ts";
import { loadRegistry } from "../pipelines/registry/registry.ts";
import { runCapture, parseUpstreamUrls } from "./capture.ts";
import { loadBuildConfig } from "./config.ts";
import { createSink } from "./sinks/create-sink.ts";
import { backfillSnapshots } from "./snapshots.ts";

/**
 * History backfills of the operator lane (spec 4.5: `backfill-depegs`, `backfill-supply-history`,
 * `backfill-cg-prices`), run as a job child process by api/routes/history-backfills.ts:
 *
 *   tsx build/backfill-history-cli.ts <job> --coins <id,id,…> --to <YYYY-MM-DD>
 *
 * 1. captures each coin's full history through the live source clients (runCapture with a plan;
 *    base URLs from BALLAST_UPSTREAM_URLS) into the data dir's live capture area
 *    `raw/<source>/<day>/<capture-id>.json.gz`, the place `make schedule` captures to, and records the
 *    provenance of each capture (endpoint, params, request URL, fetched-at, sha256 and bytes of the
 *    stored file) in `backfills/<job>-<fetchedAt>.json`;
 * 2. rebuilds the dated snapshots of the days the captured window covers (its first to last daily
 *    point, at most `--to`, the last completed UTC day), from the dated series' first published day on
 *    (none when nothing is published yet), through the dated-snapshot backfill, which skips days
 *    already published: a dated object is never rewritten.
 *
 * Endpoints per job: `cg-prices` CoinGecko `/coins/{geckoId}/market_chart`; `supply-history`
 * DefiLlama `/stablecoin/{llamaId}`; `depegs` both (prices find the incidents, supply sizes them).
 * Exit codes follow the job runner: 0 with the JSON result ({@link HistoryBackfillResult}) on stdout,
 * 2 with `{ error }` for bad input (unknown job or coin), 1 when no capture succeeded.
 */

/** The job names this script accepts and the endpoints each captures per coin. */
export const HISTORY_JOBS = {
  depegs: ["coingecko.market_chart", "defillama.stablecoin"],
  "supply-history": ["defillama.stablecoin"],
  "cg-prices": ["coingecko.market_chart"],
} as const satisfies Record<string, readonly string[]>;
export type HistoryJob = keyof typeof HISTORY_JOBS;

/** Provenance of one stored capture. `fetchedAt` Unix s; `sha256`/`bytes` of the stored gzip file. */
export interface CapturedHistory {
  key: string;
  endpoint: string;
  params: Record<string, string>;
  url: string;
  fetchedAt: number;
  sha256: string;
  bytes: number;
  /** First and last daily point of the payload (`YYYY-MM-DD`, UTC), null when it has none. */
  firstDay: string | null;
  lastDay: string | null;
}

/** stdout of a finished job. `days`: the dated snapshots of the window, `built` or `skipped` (already published). */
export interface HistoryBackfillResult {
  job: HistoryJob;
  coins: string[];
  captured: CapturedHistory[];
  failed: { endpoint: string; params: Record<string, string>; message: string }[];
  skipped: { coin: string; reason: string }[];
  window: { from: string; to: string } | null;
  /** Days rebuilt: the window from the dated series' first published day on; null when none (no series yet, or the window ends before it). */
  rebuild: { from: string; to: string } | null;
  days: { day: string; outcome: "built" | "skipped" }[];
  built: number;
  provenance: string | null;
}

/** Bad input (unknown job, coin or flag): the CLI exits 2 with `{ error }`. */
export class BadInput extends Error {}

const dayOfSec = (sec: number) => new Date(sec * 1000).toISOString().slice(0, 10);

/** Unix seconds of every daily point in a market_chart (`[ms, value]` series) or DefiLlama detail (`date` s) payload. */
function pointTimes(endpoint: string, payload: unknown): number[] {
  const out: number[] = [];
  if (endpoint === "coingecko.market_chart") {
    for (const series of Object.values(payload as Record<string, unknown>))
      if (Array.isArray(series))
        for (const p of series) if (Array.isArray(p) && typeof p[0] === "number") out.push(Math.floor(p[0] / 1000));
  } else {
    const p = payload as { tokens?: unknown[]; chainBalances?: Record<string, { tokens?: unknown[] }> };
    const lists = [p.tokens ?? [], ...Object.values(p.chainBalances ?? {}).map((c) => c.tokens ?? [])];
    for (const list of lists)
      for (const t of list) {
        const d = (t as { date?: unknown }).date;
        if (typeof d === "number") out.push(d);
      }
  }
  return out;
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/**
 * Runs one history backfill (see the module comment). Returns the result.
 * @throws BadInput for an unknown job, a missing `--coins`/`--to`, or a coin the registry does not carry.
 */
export async function runHistoryBackfill(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const [job, ...rest] = args;
  if (!(job in HISTORY_JOBS)) throw new BadInput(`unknown job ${job}: one of ${Object.keys(HISTORY_JOBS).join(", ")}`);
  const endpoints = HISTORY_JOBS[job as HistoryJob];
  const ids = (flag(rest, "--coins") ?? "").split(",").filter(Boolean);
  const to = flag(rest, "--to");
  if (!ids.length) throw new BadInput("--coins: required (comma-separated stablecoin ids)");
  if (!to || !/^\d{4}-\d{2}-\d{2}$/.test(to)) throw new BadInput("--to: required (YYYY-MM-DD)");
  const registry = loadRegistry();
  const config = loadBuildConfig(env);
  const sink = createSink(config);
  const skipped: HistoryBackfillResult["skipped"] = [];
  const plan: { endpoint: string; params: Record<string, string> }[] = [];
  for (const id of ids) {
    const coin = registry.coins.find((c) => c.id === id);
    if (!coin) throw new BadInput(`Invalid parameter stablecoin: ${id} is not in the registry`);
    for (const endpoint of endpoints) {
      const upstreamId = endpoint === "coingecko.market_chart" ? coin.geckoId : coin.llamaId;
      if (!upstreamId)
        skipped.push({
          coin: id,
          reason: `no ${endpoint === "coingecko.market_chart" ? "CoinGecko" : "DefiLlama"} id`,
        });
      else plan.push({ endpoint, params: { id: upstreamId } });
    }
  }
  const overrides = parseUpstreamUrls(config.BALLAST_UPSTREAM_URLS);
  const failed: HistoryBackfillResult["failed"] = [];
  const keys = await runCapture(config, sink, { plan, env, onError: (f) => failed.push(f) });
  const captured: CapturedHistory[] = [];
  for (const key of keys) {
    const bytes = await sink.get(key);
    if (!bytes) continue;
    const stored = JSON.parse(gunzipSync(bytes).toString("utf8")) as {
      endpoint: string;
      params: Record<string, string>;
      observedAt: number;
      payload: unknown;
    };
    const ep = ENDPOINTS[stored.endpoint];
    const base = overrides[ep.source] ?? SOURCE_BASE_URLS[ep.source];
    const path =
      stored.endpoint === "coingecko.market_chart"
        ? `coins/${encodeURIComponent(stored.params.id)}/market_chart?vs_currency=usd&days=max&interval=daily`
        : `/stablecoin/${encodeURIComponent(stored.params.id)}`;
    const times = pointTimes(stored.endpoint, stored.payload).sort((a, b) => a - b);
    captured.push({
      key,
      endpoint: stored.endpoint,
      params: stored.params,
      url: new URL(path, base).toString(),
      fetchedAt: stored.observedAt,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      bytes: bytes.length,
      firstDay: times.length ? dayOfSec(times[0]) : null,
      lastDay: times.length ? dayOfSec(times[times.length - 1]) : null,
    });
  }
  const firsts = captured.flatMap((c) => (c.firstDay ? [c.firstDay] : [])).sort();
  const lasts = captured.flatMap((c) => (c.lastDay ? [c.lastDay] : [])).sort();
  const from = firsts[0];
  const last = lasts.at(-1);
  const windowTo = last && last < to ? last : to;
  const window = from && from <= windowTo ? { from, to: windowTo } : null;
  let provenance: string | null = null;
  if (captured.length) {
    provenance = `backfills/${job}-${captured[0].fetchedAt}.json`;
    await sink.put(provenance, JSON.stringify({ job, coins: ids, captured, failed, window }, null, 2));
  }
  // The dated series starts at its earliest published day: days before it were never published, and
  // extending the series backwards is backfill-stability-index's job (explicit startDay), not a
  // multi-year side effect of a `days=max` history capture.
  const seriesStart = (await sink.list("snapshots/"))
    .flatMap((k) => /^snapshots\/(\d{4}-\d{2}-\d{2})\.json$/.exec(k)?.[1] ?? [])
    .sort()[0];
  const rebuildFrom = window && seriesStart ? [seriesStart, window.from].sort()[1] : undefined; // the later day
  const rebuild = window && rebuildFrom && rebuildFrom <= window.to ? { from: rebuildFrom, to: window.to } : null;
  const steps = rebuild
    ? await backfillSnapshots(rebuild.from, rebuild.to, { captureDir: config.BALLAST_CAPTURE_DIR, sink })
    : [];
  const result: HistoryBackfillResult = {
    job: job as HistoryJob,
    coins: ids,
    captured,
    failed,
    skipped,
    window,
    rebuild,
    days: steps.map((s) => ({ day: s.day, outcome: s.outcome })),
    built: steps.filter((s) => s.outcome === "built").length,
    provenance,
  };
  return result;
}
