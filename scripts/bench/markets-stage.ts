/**
 * One markets-stage run for `make bench`: load → model as of 2026-09-03 (the recorded DefiLlama yields
 * sample, observed 2026-09-02, is then in the build), then the yields artifacts; prints one JSON line with
 * the wall time (ms) of the markets nodes (`MARKETS_STAGE`) plus the yield artifacts' projections and
 * assembly, the pool counts and this process's peak RSS (KiB).
 */
import { loadBuildConfig } from "../../build/config.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import { MARKETS_STAGE } from "../../pipelines/analytics/analytics.ts";
import { yieldAdapterManifestArtifact, yieldHistoryArtifact, yieldRankingsArtifact } from "../../site-data/yields.ts";

const asOf = Date.parse("2026-09-03T00:00:00Z") / 1000;
const {
  db,
  modelRun: run,
  sourceObservedAt,
} = await loadAndModel({ asOf, captureDir: loadBuildConfig().BALLAST_CAPTURE_DIR });
const t0 = performance.now();
for (const artifact of [yieldRankingsArtifact, yieldHistoryArtifact, yieldAdapterManifestArtifact]) {
  const rows: Record<string, Record<string, unknown>[]> = {};
  for (const [name, sql] of Object.entries(artifact.queries)) rows[name] = await db.all(sql);
  await artifact.prepare?.();
  artifact.assemble(rows, { asOf, sourceObservedAt });
}
const yieldsMs = performance.now() - t0;
const rows = Object.fromEntries(run.tables.map((t) => [t.name, t.rows]));
console.log(
  JSON.stringify({
    marketsStageMs: MARKETS_STAGE.reduce((s, name) => s + (run.timings[name] ?? 0), 0) + yieldsMs,
    pools: rows.yield_pools,
    matches: rows.pool_coin_matches,
    maxRssKb: process.resourceUsage().maxRSS,
  }),
);
db.close();
