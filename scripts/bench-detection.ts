/**
 * One detection run for `make bench`: loads every recorded capture, runs the model DAG, and prints
 * one JSON line with the wall time (ms) of the peg monitor (consensus + detection over all coins
 * and all observations), of the whole peg stage (monitor + scores + resolver), the counts, and
 * this process's peak RSS (KiB).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectCaptures } from "../build/captures.ts";
import { loadBuildConfig, REPO_ROOT } from "../build/config.ts";
import { Db } from "../build/duckdb.ts";
import { loadCaptures } from "../build/load.ts";
import { discoverModels, runModels } from "../build/models.ts";
import { prepareBuildDb } from "../build/run-build.ts";
import { FsSink } from "../build/sinks/fs.ts";
import { ANALYTICS } from "../pipelines/analytics/analytics.ts";
import { loadRegistry } from "../pipelines/registry/registry.ts";

const asOf = Date.parse("2025-09-07T00:00:00Z") / 1000;
const db = await Db.open(":memory:", { threads: "1" });
await prepareBuildDb(db, asOf, loadRegistry());
const { captures } = await collectCaptures(loadBuildConfig().BALLAST_CAPTURE_DIR, new FsSink(mkdtempSync(join(tmpdir(), "ballast-bench-det-"))), asOf);
await loadCaptures(db, captures, asOf);
const run = await runModels(db, discoverModels(join(REPO_ROOT, "pipelines/models"), ANALYTICS));
const [{ obs }] = await db.all<{ obs: number }>("select count(*)::integer as obs from int_price_observations");
const rows = Object.fromEntries(run.tables.map((t) => [t.name, t.rows]));
console.log(JSON.stringify({
  monitorMs: run.timings.peg_monitor,
  pegStageMs: run.timings.peg_monitor + run.timings.peg_summary + run.timings.depeg_resolver,
  observations: obs, slots: rows.price_consensus_slots, incidents: rows.depeg_incidents,
  maxRssKb: process.resourceUsage().maxRSS,
}));
db.close();
