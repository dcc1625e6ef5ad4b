import { join } from "node:path";
import { ANALYTICS } from "../../pipelines/analytics/analytics.ts";
import { REPO_ROOT } from "../config.ts";
import type { AppliedVerdictFile, SourceLineagePair } from "../../site-data/manifest.ts";
import type { StoredVerdictFile } from "../depeg-verdicts.ts";
import { Db } from "../duckdb.ts";
import { log, type Logger } from "../log.ts";
import { discoverModels, type ModelRunResult, runModels } from "../models.ts";
import { type LoadedInputs, loadEffectsOf, loadInputs, type LoadOptions } from "./load.ts";

/** Result of load + model: the open database holding every raw table and mart, and what the manifest needs. */
export interface ModelledBuild extends LoadedInputs {
  /** In-memory, single-threaded database; the caller closes it (`db.close()`). */
  db: Db;
  /** Rows per created table, quality rejections per analytic, wall time per node (ms). */
  modelRun: ModelRunResult;
  /** Input rows refused by a quality rule, per producer (analytic or `supply_value_rejections`) and reason. */
  qualityRejections: Record<string, Record<string, number>>;
  /** Every measured pair of daily price series (source_lineage_check summed over coins and years), for the manifest. */
  sourceLineage: SourceLineagePair[];
  /**
   * Manifest warnings of the model stage: one per coin the supply-chain guard quarantined, and one per
   * pair of price series that agree like copies but are declared independent (source_lineage_check).
   */
  modelWarnings: string[];
  /** Recorded depeg-history verdicts and what this build applied of each (manifest `depegVerdicts`; empty: none recorded). */
  depegVerdicts: AppliedVerdictFile[];
}

/**
 * Model stage: runs the DAG (`pipelines/models` SQL + the TS analytics) and its asserts over the loaded
 * database. Throws ModelError naming the model/assert, or an Error when no coin has a current supply
 * (no list capture at all and no current supply: nothing to build).
 */
export async function runModelStage(
  db: Db,
  logger: Logger = log,
): Promise<Pick<ModelledBuild, "modelRun" | "qualityRejections" | "sourceLineage" | "modelWarnings">> {
  const modelRun = await runModels(db, discoverModels(join(REPO_ROOT, "pipelines/models"), ANALYTICS));
  const slowest = Object.entries(modelRun.timings)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([name, ms]) => `${name} ${Math.round(ms)} ms`);
  logger("info", "model", "models built", { count: modelRun.tables.length, slowest });
  const [{ n: currentCoins }] = await db.all<{ n: number }>("select count(*)::integer as n from stablecoins");
  if (currentCoins === 0) {
    throw new Error(
      "source defillama.stablecoins: no capture observed at or before as-of (or none within its freshness window) and no supply history within its freshness window of as-of; nothing to build",
    );
  }
  const supplyRejections = Object.fromEntries(
    (
      await db.all<{ reason: string; n: number }>(
        "select reason, count(*)::integer as n from supply_value_rejections group by reason order by reason",
      )
    ).map((r) => [r.reason, r.n]),
  );
  const guarded = await db.all<{
    stablecoin_id: string;
    total_usd: number | null;
    chain_total_usd: number;
    chain_count: number;
  }>("select stablecoin_id, total_usd, chain_total_usd, chain_count from supply_chain_guard order by stablecoin_id");
  const qualityRejections = {
    ...modelRun.rejected,
    ...(Object.keys(supplyRejections).length ? { supply_value_rejections: supplyRejections } : {}),
    ...(guarded.length
      ? { supply_chain_guard: { "chain-sum-above-total": guarded.reduce((n, g) => n + g.chain_count, 0) } }
      : {}),
  };
  const guardWarnings = guarded.map(
    (g) =>
      `supply-chain guard: ${g.stablecoin_id} quarantined: its ${g.chain_count} chains sum to $${Math.round(g.chain_total_usd)} but its total is ${g.total_usd === null ? "unknown" : `$${Math.round(g.total_usd)}`} (more than 1% apart); the total is published as the upstream reports it, its chain rows are withheld (supplyChainGuard in /api/stablecoins)`,
  );
  const lineage = await db.all<{
    source_a: string;
    source_b: string;
    family_a: string;
    family_b: string;
    years: string;
    shared: number;
    equal: number;
    copies: number;
    undeclared: number;
  }>(
    `select source_a, source_b, any_value(family_a) as family_a, any_value(family_b) as family_b,
       coalesce(string_agg(gecko_id || ' ' || year, ', ' order by gecko_id, year) filter (where verdict = 'undeclared-copy'), '') as years,
       sum(shared_days)::integer as shared, sum(equal_days)::integer as equal,
       (count(*) filter (where verdict <> 'independent-by-evidence'))::integer as copies,
       (count(*) filter (where verdict = 'undeclared-copy'))::integer as undeclared
     from source_lineage_check group by source_a, source_b order by source_a, source_b`,
  );
  const sourceLineage: SourceLineagePair[] = lineage.map((r) => ({
    sourceA: r.source_a,
    sourceB: r.source_b,
    familyA: r.family_a,
    familyB: r.family_b,
    sharedDays: r.shared,
    equalDays: r.equal,
    verdict: r.undeclared ? "undeclared-copy" : r.copies ? "declared-same-family" : "independent-by-evidence",
  }));
  const modelWarnings = lineage
    .filter((r) => r.undeclared > 0)
    .map(
      (r) =>
        `source lineage: ${r.source_a} and ${r.source_b} agree to 1e-9 on ${r.equal} of ${r.shared} shared days (${r.years}) but are declared independent families: by evidence they are one family (declare the copy in its source module, pipelines/sources/lineage.ts)`,
    );
  return { modelRun, qualityRejections, sourceLineage, modelWarnings: [...guardWarnings, ...modelWarnings] };
}

/**
 * DuckDB memory limit of the build database: past it, DuckDB evicts table blocks to the spill folder.
 * At 10× the recorded history the tables hold 1.6 GB (239 MB at 1×, mostly one block per column
 * segment); with one thread, spilling them costs little, and the process stays within its memory budget.
 */
export const BUILD_DB_MEMORY_LIMIT = "256MB";

/**
 * Load → model in a fresh in-memory database opened with one thread (floating-point sums then run in
 * one order, so artifacts are byte-reproducible): captures selected at as-of, registry tables incl.
 * unreviewed coins, the model DAG incl. analytics; DuckDB keeps at most BUILD_DB_MEMORY_LIMIT in memory and
 * spills to `opts.spillDir` when set (else to a folder of its own: Db.open). Serves the build, the backtest, the detection bench and the SQL tests. Returns the open database (caller closes it); closes it itself when a stage throws
 * (source errors, ModelError).
 */
export async function loadAndModel(opts: LoadOptions): Promise<ModelledBuild> {
  const db = await Db.open(":memory:", {
    threads: "1",
    memory_limit: BUILD_DB_MEMORY_LIMIT,
    ...(opts.spillDir ? { temp_directory: opts.spillDir } : {}),
  });
  try {
    const fx = loadEffectsOf(opts);
    const loaded = await loadInputs(db, { asOf: opts.asOf, registry: opts.registry, effects: fx });
    const modelled = await runModelStage(db, fx.logger);
    const depegVerdicts = await appliedVerdicts(db, loaded.depegVerdictFiles);
    return { ...loaded, db, ...modelled, depegVerdicts, warnings: [...loaded.warnings, ...modelled.modelWarnings] };
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Per recorded verdict file: its provenance and what peg_monitor applied of it (`depeg_verdicts_applied`). */
async function appliedVerdicts(db: Db, files: StoredVerdictFile[]): Promise<AppliedVerdictFile[]> {
  if (!files.length) return [];
  const rows = await db.all<{
    version: number;
    action: "delete" | "merge";
    event_id: string;
    merge_into: string | null;
    applied: boolean;
    note: string | null;
  }>(
    "select version::integer as version, action, event_id::varchar as event_id, merge_into::varchar as merge_into, applied, note from depeg_verdicts_applied order by version, event_id",
  );
  return files.map(({ key, sha256, file }) => {
    const mine = rows.filter((r) => r.version === file.version);
    const merged = new Map<number, number[]>();
    for (const r of mine)
      if (r.action === "merge" && r.applied && r.merge_into !== null) {
        const into = Number(r.merge_into);
        merged.set(into, [...(merged.get(into) ?? []), Number(r.event_id)]);
      }
    return {
      key,
      version: file.version,
      sha256,
      recordedAt: file.recordedAt,
      recordedBy: file.recordedBy,
      requestId: file.requestId,
      deleted: mine.filter((r) => r.action === "delete" && r.applied).map((r) => Number(r.event_id)),
      merged: [...merged.entries()].map(([into, eventIds]) => ({ into, eventIds: eventIds.sort((a, b) => a - b) })),
      notApplied: mine
        .filter((r) => !r.applied)
        .map((r) => ({ action: r.action, eventId: Number(r.event_id), note: r.note ?? "not applied" })),
    };
  });
}
