/**
 * One detection run for `make bench`: loads every recorded capture, runs the model DAG, and prints
 * one JSON line with the wall time (ms) of the peg monitor (consensus + detection over all coins
 * and all observations), of the whole peg stage (monitor + scores + resolver), of the risk stage (DEWS,
 * stability index, safety scores and their daily history over all recorded history), the counts, and
 * this process's peak RSS (KiB). The V8 heap grows as in a build process (BALLAST_HEAP_GROWING_PERCENT).
 */
import { applyHeapGrowingPercent } from "../lib/heap-growth.ts";
import { loadBuildConfig } from "../build/config.ts";
import { loadAndModel } from "../build/stages/model.ts";
import { RISK_STAGE } from "../pipelines/analytics/analytics.ts";

const config = loadBuildConfig();
applyHeapGrowingPercent(config.BALLAST_HEAP_GROWING_PERCENT);
const asOf = Date.parse("2025-09-07T00:00:00Z") / 1000;
const { db, modelRun: run } = await loadAndModel({ asOf, captureDir: config.BALLAST_CAPTURE_DIR });
const [{ obs }] = await db.all<{ obs: number }>("select count(*)::integer as obs from int_price_observations");
const rows = Object.fromEntries(run.tables.map((t) => [t.name, t.rows]));
console.log(
  JSON.stringify({
    monitorMs: run.timings.peg_monitor,
    pegStageMs: run.timings.peg_monitor + run.timings.peg_summary + run.timings.depeg_resolver,
    riskStageMs: RISK_STAGE.reduce((s, name) => s + run.timings[name], 0),
    observations: obs,
    slots: rows.price_consensus_slots,
    incidents: rows.depeg_incidents,
    maxRssKb: process.resourceUsage().maxRSS,
  }),
);
db.close();
