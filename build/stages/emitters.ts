import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { serialise } from "../../datasets/contract.ts";
import { DATASETS } from "../../datasets/datasets.ts";
import { METHODOLOGY_CHANGELOGS } from "../../pipelines/analytics/changelogs.ts";
import { SITE_DATA_ARTIFACTS } from "../../site-data/artifacts.ts";
import { OG_FEATURE } from "../../site-data/og-images.ts";
import { log } from "../log.ts";
import { renderOgImages } from "../og/images.ts";
import { ArtifactError, type EmitContext, type Emitter, type EmittedFile, type DatedCopy, toJson } from "./emit.ts";

/** Tables copied into the researchers' `ballast.duckdb`. */
const PUBLISHED_TABLES = [
  "registry_coins", "registry_chains", "stablecoins", "stablecoin_chain_supply", "chain_supply", "chain_health", "supply_history_daily",
  "total_supply_daily", "non_usd_share_daily", "fx_rates_daily", "price_history_daily", "chain_supply_samples",
  "depeg_events", "depeg_pending", "tape_events", "peg_scores", "price_consensus_slots", "price_observation_rejections",
  "supply_value_rejections", "supply_chain_guard", "listed_supply_daily", "source_quality_daily", "source_lineage_check",
  "blacklist_events", "mint_burn_events", "mint_burn_hourly", "mint_burn_daily", "bluechip_ratings", "usds_status",
  "report_cards", "safety_score_history", "dependency_edges",
  "stability_index_daily", "dews_daily", "redemption_backstops",
  "yield_pools", "pool_coin_matches", "yield_single_asset_pools", "dex_liquidity", "dex_liquidity_daily",
];

/** Newest DefiLlama list capture used (Unix s): the `dataAsOf` of datasets and the DuckDB file. */
const listObservedAt = (ctx: EmitContext) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null;

/**
 * `site-data/**.json`: every site-data artifact's projections assembled into payloads, each checked
 * against the artifact's zod schema (ArtifactError naming the artifact and file otherwise).
 */
export const siteDataEmitter: Emitter = {
  name: "site-data",
  async emit(ctx) {
    const files: EmittedFile[] = [];
    for (const artifact of SITE_DATA_ARTIFACTS) {
      const rows: Record<string, Record<string, unknown>[]> = {};
      for (const [name, sql] of Object.entries(artifact.queries)) rows[name] = await ctx.db.all(sql);
      const { files: out, dataAsOf } = artifact.assemble(rows, { asOf: ctx.asOf, sourceObservedAt: ctx.sourceObservedAt });
      for (const f of out) {
        const res = artifact.schema.safeParse(f.payload);
        if (!res.success) {
          throw new ArtifactError(`artifact ${artifact.key} (${f.path}) failed its schema: ${res.error.issues.slice(0, 3).map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, artifact.key);
        }
        files.push({ path: f.path, body: toJson(f.payload), extras: { artifact: artifact.key, rows: f.rows, dataAsOf, schemaVersion: artifact.schemaVersion, maxAgeSec: artifact.maxAgeSec } });
      }
    }
    return { files, datedCopies: [] };
  },
};

/**
 * Datasets (`datasets/datasets.ts`), every row checked against its zod schema: undated topics as
 * `datasets/<topic>.<fmt>`, dated ones as `datasets/<topic>/<as-of day>.<fmt>` plus the same bytes as a
 * dated copy at that key outside the build (kept 90 days), and `sheets/<topic>.csv` for sheet topics.
 */
export const datasetsEmitter: Emitter = {
  name: "datasets",
  async emit(ctx) {
    const files: EmittedFile[] = [];
    const datedCopies: DatedCopy[] = [];
    const dataAsOf = listObservedAt(ctx);
    for (const ds of DATASETS) {
      const rows = await ctx.db.all(ds.sql);
      for (const [i, r] of rows.entries()) {
        const res = ds.row.safeParse(r);
        if (!res.success) throw new ArtifactError(`dataset ${ds.topic} row ${i} failed its schema: ${res.error.issues[0]?.path.join(".")}: ${res.error.issues[0]?.message}`, ds.topic);
      }
      for (const fmt of ds.formats) {
        const body = serialise(rows, ds.columns, fmt);
        const path = ds.dated ? `datasets/${ds.topic}/${ctx.asOfDay}.${fmt}` : `datasets/${ds.topic}.${fmt}`;
        files.push({ path, body, extras: { artifact: `dataset:${ds.topic}`, rows: rows.length, dataAsOf, schemaVersion: "1.0.0" } });
        if (ds.dated) datedCopies.push({ key: path, body });
        if (ds.sheet && fmt === "csv") files.push({ path: `sheets/${ds.topic}.csv`, body, extras: { artifact: `sheet:${ds.topic}`, rows: rows.length, dataAsOf, schemaVersion: "1.0.0" } });
      }
    }
    return { files, datedCopies };
  },
};

/** `ballast.duckdb`: the registry and every mart for researchers (read-only by convention); its bytes are not reproducible. */
export const duckdbEmitter: Emitter = {
  name: "duckdb",
  async emit(ctx) {
    const dbPath = join(ctx.scratchDir, "ballast.duckdb");
    await ctx.db.exec(`attach '${dbPath.replace(/'/g, "''")}' as pub`);
    for (const t of PUBLISHED_TABLES) await ctx.db.exec(`create table pub.${t} as select * from ${t} order by all`);
    await ctx.db.exec("detach pub");
    const file: EmittedFile = { path: "ballast.duckdb", body: await readFile(dbPath), extras: { artifact: "duckdb", rows: null, dataAsOf: listObservedAt(ctx), schemaVersion: "1.0.0" }, unstable: true };
    return { files: [file], datedCopies: [] };
  },
};

/**
 * `methodology/<analytic>.md`: the changelog of every versioned methodology
 * (`pipelines/analytics/changelogs/`), so each payload's `methodology.changelogPath` resolves
 * within the build that published it.
 */
export const methodologyEmitter: Emitter = {
  name: "methodology",
  async emit() {
    const files: EmittedFile[] = [];
    for (const c of METHODOLOGY_CHANGELOGS) {
      const path = c.path.slice(1);
      if (files.some((f) => f.path === path)) continue;
      files.push({ path, body: await readFile(c.file), extras: { artifact: "methodology", rows: null, dataAsOf: null, schemaVersion: "1.0.0" } });
    }
    return { files, datedCopies: [] };
  },
};

/**
 * `og/**.png`: share images (site-data/og-images.ts) rendered from the site-data payloads emitted
 * before it (so an image shows exactly what the API serves), 1200×630 PNG, byte-reproducible. An
 * image whose data is missing is left out (its route answers 503) and logged; nothing is invented.
 * Runs after siteDataEmitter.
 */
export const ogImagesEmitter: Emitter = {
  name: OG_FEATURE,
  async emit(ctx) {
    const r = await renderOgImages(ctx.emitted, ctx.asOf);
    log("info", "emit", `rendered ${r.images.length} OG images in ${r.renderMs} ms`, { skipped: r.skipped.length });
    if (r.skipped.length) log("warn", "emit", `OG images left out: ${r.skipped.slice(0, 5).join("; ")}${r.skipped.length > 5 ? ` (+${r.skipped.length - 5} more)` : ""}`);
    if (r.refused.length) log("warn", "emit", `OG renderer asked for glyphs outside its font (refused, drawn without): ${r.refused.slice(0, 3).join(", ")}`);
    const dataAsOf = listObservedAt(ctx);
    const files: EmittedFile[] = r.images.map((i) => ({ path: i.path, body: i.png, extras: { artifact: `og:${i.name}`, rows: null, dataAsOf, schemaVersion: "1.0.0" } }));
    return { files, datedCopies: [] };
  },
};

/** Every emitter of a build, in run order. Adding a kind of published file = adding an entry here. */
export const EMITTERS: readonly Emitter[] = [siteDataEmitter, datasetsEmitter, duckdbEmitter, methodologyEmitter, ogImagesEmitter];
