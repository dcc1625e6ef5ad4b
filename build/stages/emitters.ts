import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { csvProvenance, DATASET_FORMATS, serialise } from "../../datasets/contract.ts";
import { buildDatapackage, type DatapackageFile } from "../../datasets/datapackage.ts";
import { DATASETS } from "../../datasets/datasets.ts";
import { METHODOLOGY_CHANGELOGS } from "../../pipelines/analytics/changelogs.ts";
import { SITE_DATA_ARTIFACTS } from "../../site-data/artifacts.ts";
import type { Artifact } from "../../site-data/contract.ts";
import { OG_FEATURE } from "../../site-data/og-images.ts";
import { renderOgImages } from "../og/images.ts";
import { commentStatements, PUBLISHED_TABLES } from "../../datasets/table-docs.ts";
import {
  ArtifactError,
  type Body,
  bodyLength,
  bodySha256,
  type DeferredFile,
  type EmitContext,
  type Emitter,
  type EmittedFile,
  type DatedCopy,
  toJson,
} from "./emit.ts";

/** Newest DefiLlama list capture used (Unix s): the `dataAsOf` of datasets and the DuckDB file. */
const listObservedAt = (ctx: EmitContext) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null;

/**
 * `site-data/**.json`: every site-data artifact's projections assembled into payloads, each checked
 * against the artifact's zod schema (ArtifactError naming the artifact and file otherwise).
 */
export const siteDataEmitter: Emitter = siteDataEmitterOf(SITE_DATA_ARTIFACTS);

/** The site-data emitter over `artifacts` only (a dated snapshot emits the few it carries). */
export function siteDataEmitterOf(artifacts: readonly Artifact[]): Emitter {
  return { name: "site-data", emit: (ctx) => emitSiteData(ctx, artifacts) };
}

async function emitSiteData(
  ctx: EmitContext,
  artifacts: readonly Artifact[],
): Promise<{ files: EmittedFile[]; datedCopies: DatedCopy[] }> {
  const files: EmittedFile[] = [];
  for (const artifact of artifacts) {
    const rows: Record<string, Record<string, unknown>[]> = {};
    for (const [name, sql] of Object.entries(artifact.queries)) rows[name] = await ctx.db.all(sql);
    await artifact.prepare?.();
    const { files: out, dataAsOf } = artifact.assemble(rows, {
      asOf: ctx.asOf,
      sourceObservedAt: ctx.sourceObservedAt,
    });
    for (const f of out) {
      const extras = {
        artifact: artifact.key,
        rows: f.rows,
        dataAsOf,
        schemaVersion: artifact.schemaVersion,
        maxAgeSec: artifact.maxAgeSec,
      };
      if (f.body) {
        files.push({ path: f.path, body: await ctx.spool(f.body), extras });
        continue;
      }
      const res = artifact.schema.safeParse(f.payload);
      if (!res.success) {
        throw new ArtifactError(
          `artifact ${artifact.key} (${f.path}) failed its schema: ${res.error.issues
            .slice(0, 3)
            .map((i) => `${i.path.join(".")}: ${i.message}`)
            .join("; ")}`,
          artifact.key,
        );
      }
      files.push({ path: f.path, body: await ctx.spool(toJson(f.payload)), extras });
    }
  }
  return { files, datedCopies: [] };
}

/**
 * Parquet options that make DuckDB's writer byte-reproducible: one thread (row groups are cut in one
 * order), a fixed row-group size and codec. `created_by` names the DuckDB version, so bytes change only
 * with a DuckDB upgrade. Checked by building twice (test/e2e/build-and-serve.test.ts).
 */
const PARQUET_OPTIONS = "FORMAT PARQUET, COMPRESSION zstd, COMPRESSION_LEVEL 3, ROW_GROUP_SIZE 122880";

/** Writes `sql`'s rows to `file` with DuckDB `COPY … (FORMAT PARQUET)` on one thread. */
async function writeParquet(db: EmitContext["db"], sql: string, file: string): Promise<void> {
  const [{ threads }] = await db.all<{ threads: string }>("select current_setting('threads')::varchar as threads");
  await db.exec("set threads = 1");
  try {
    await db.exec(`copy (\n${sql.trim().replace(/;$/, "")}\n) to '${file.replace(/'/g, "''")}' (${PARQUET_OPTIONS})`);
  } finally {
    await db.exec(`set threads = ${Number(threads)}`);
  }
}

/** Methodology versions in force of a dataset's analytics, in declaration order. */
const methodologyOf = (analytics: string[]) =>
  analytics.flatMap((a) => {
    const versions = METHODOLOGY_CHANGELOGS.filter((c) => c.analytic === a);
    if (!versions.length)
      throw new Error(`dataset methodology ${a} has no changelog (pipelines/analytics/changelogs.ts)`);
    return versions.map((c) => ({ analytic: a, versionId: c.versionId }));
  });

/**
 * Datasets (`datasets/datasets.ts`), every row checked against its zod schema, in every format
 * (csv, json, ndjson from the rows; parquet by DuckDB `COPY` of the same query): undated topics as
 * `datasets/<topic>.<fmt>`, dated ones as `datasets/<topic>/<as-of day>.<fmt>` plus the same bytes as a
 * dated copy at that key outside the build (kept 90 days; write-once: only when no earlier build of the
 * day stored other bytes there, `EmitContext.storedSha256`), `sheets/<topic>.csv` for sheet topics (no
 * comment line), and `datasets/<topic>/datapackage.json` rendered once the build id is known. Every
 * dataset CSV starts with a provenance comment line (csvProvenance).
 */
export const datasetsEmitter: Emitter = {
  name: "datasets",
  async emit(ctx) {
    const files: EmittedFile[] = [];
    const datedCopies: DatedCopy[] = [];
    const deferred: DeferredFile[] = [];
    const dataAsOf = listObservedAt(ctx);
    for (const ds of DATASETS) {
      const rows = await ctx.db.all(ds.sql);
      for (const [i, r] of rows.entries()) {
        const res = ds.row.safeParse(r);
        if (!res.success)
          throw new ArtifactError(
            `dataset ${ds.topic} row ${i} failed its schema: ${res.error.issues[0]?.path.join(".")}: ${res.error.issues[0]?.message}`,
            ds.topic,
          );
      }
      const described = await ctx.db.all<{ column_name: string; column_type: string }>(
        `describe select * from (\n${ds.sql.trim().replace(/;$/, "")}\n)`,
      );
      const columnTypes = Object.fromEntries(described.map((c) => [c.column_name, c.column_type]));
      const missing = ds.columns.filter((c) => !(c in columnTypes));
      if (missing.length || described.length !== ds.columns.length) {
        throw new ArtifactError(
          `dataset ${ds.topic}: SQL columns ${described.map((c) => c.column_name).join(",")} do not match the declared ${ds.columns.join(",")}`,
          ds.topic,
        );
      }
      const methodology = methodologyOf(ds.methodologies);
      const comment = csvProvenance({
        topic: ds.topic,
        asOf: ctx.asOf,
        methodology: methodology.map((m) => m.versionId),
        inputsSha256: ctx.inputsSha256,
      });
      const extras = { artifact: `dataset:${ds.topic}`, rows: rows.length, dataAsOf, schemaVersion: "1.0.0" };
      const packaged: DatapackageFile[] = [];
      const dated: DatedCopy[] = [];
      for (const fmt of DATASET_FORMATS) {
        let body: Body;
        if (fmt === "parquet") {
          const file = join(ctx.scratchDir, `${ds.topic}.parquet`);
          await writeParquet(ctx.db, ds.sql, file);
          body = await ctx.spool({ file });
        } else body = await ctx.spool(serialise(rows, ds.columns, fmt, fmt === "csv" ? comment : undefined));
        const path = ds.dated ? `datasets/${ds.topic}/${ctx.asOfDay}.${fmt}` : `datasets/${ds.topic}.${fmt}`;
        files.push({ path, body, extras });
        packaged.push({
          format: fmt,
          path: ds.dated ? `${ctx.asOfDay}.${fmt}` : `latest.${fmt}`,
          bytes: bodyLength(body),
          sha256: bodySha256(body),
        });
        if (ds.dated) dated.push({ key: path, body });
        if (ds.sheet && fmt === "csv") {
          files.push({
            path: `sheets/${ds.topic}.csv`,
            body: await ctx.spool(serialise(rows, ds.columns, "csv")),
            extras: { ...extras, artifact: `sheet:${ds.topic}` },
          });
        }
      }
      // Write-once: the first build of a UTC day owns `<day>.<fmt>`. A later build of the day whose bytes
      // differ publishes none of the day's files; its descriptor points at `latest.<fmt>` (its own files).
      let datedFiles: "this-build" | "earlier-build" | undefined;
      if (ds.dated) {
        const stored = await Promise.all(dated.map((c) => ctx.storedSha256?.(c.key) ?? null));
        const first = stored.every((h, i) => h === null || h === packaged[i].sha256);
        datedFiles = first ? "this-build" : "earlier-build";
        if (first) datedCopies.push(...dated);
        else for (const f of packaged) f.path = `latest.${f.format}`;
      }
      deferred.push({
        path: `datasets/${ds.topic}/datapackage.json`,
        extras: { ...extras, artifact: `datapackage:${ds.topic}` },
        render: (buildId) =>
          `${JSON.stringify(buildDatapackage({ dataset: ds, columnTypes, rows: rows.length, files: packaged, asOf: ctx.asOf, buildId, methodology, inputsSha256: ctx.inputsSha256, datedFiles }), null, 1)}\n`,
      });
    }
    return { files, datedCopies, deferred };
  },
};

/**
 * `ballast.duckdb`: the registry and every mart for researchers (read-only by convention), each table and column
 * carrying a `COMMENT ON` from datasets/table-docs.ts; its bytes are not reproducible.
 */
export const duckdbEmitter: Emitter = {
  name: "duckdb",
  background: true,
  async emit(ctx) {
    const dbPath = join(ctx.scratchDir, "ballast.duckdb");
    // A connection of its own: the copy runs on DuckDB's thread while the next emitters compute on the main thread.
    const conn = await ctx.db.connect();
    try {
      await conn.exec(`attach '${dbPath.replace(/'/g, "''")}' as pub`);
      // One transaction for every table and comment: committed one by one, each statement synced the
      // file's write-ahead log (~3 s of the build's ~4 s here for this file).
      await conn.exec("begin transaction");
      for (const t of PUBLISHED_TABLES) {
        await conn.exec(`create table pub.${t} as select * from ${t} order by all`);
        // Every table and column documented from datasets/table-docs.ts (deterministic text).
        const cols = await conn.all<{ column_name: string }>(
          `select column_name from duckdb_columns() where database_name = 'pub' and table_name = '${t}' order by column_index`,
        );
        for (const sql of commentStatements(
          "pub",
          t,
          cols.map((c) => c.column_name),
        ))
          await conn.exec(sql);
      }
      await conn.exec("commit");
      await conn.exec("detach pub");
    } finally {
      conn.close();
    }
    const file: EmittedFile = {
      path: "ballast.duckdb",
      body: await ctx.spool({ file: dbPath }),
      extras: { artifact: "duckdb", rows: null, dataAsOf: listObservedAt(ctx), schemaVersion: "1.0.0" },
      unstable: true,
    };
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
      files.push({
        path,
        body: await readFile(c.file),
        extras: { artifact: "methodology", rows: null, dataAsOf: null, schemaVersion: "1.0.0" },
      });
    }
    return { files, datedCopies: [] };
  },
};

/**
 * `og/**.png`: share images (site-data/og-images.ts) rendered from the site-data payloads emitted
 * before it (so an image shows exactly what the API serves), 1200×630 PNG, byte-reproducible. An
 * image whose data is missing is left out (its route answers 503) and logged; nothing is invented.
 * Runs after siteDataEmitter, in the background: the images render on a worker thread while the
 * datasets and the DuckDB file are written. Images unchanged since a build that used the same
 * `ctx.ogCache` (build/og/cache.ts) are read back from it, not rendered.
 */
export const ogImagesEmitter: Emitter = {
  name: OG_FEATURE,
  background: true,
  async emit(ctx) {
    const r = await renderOgImages(ctx.emitted, ctx.asOf, ctx.ogCache ?? null);
    ctx.logger("info", "emit", `OG images: rendered ${r.rendered}, cached ${r.cached} in ${r.renderMs} ms`, {
      rendered: r.rendered,
      cached: r.cached,
      skipped: r.skipped.length,
    });
    if (r.skipped.length)
      ctx.logger(
        "warn",
        "emit",
        `OG images left out: ${r.skipped.slice(0, 5).join("; ")}${r.skipped.length > 5 ? ` (+${r.skipped.length - 5} more)` : ""}`,
      );
    if (r.refused.length)
      ctx.logger(
        "warn",
        "emit",
        `OG renderer asked for glyphs outside its font (refused, drawn without): ${r.refused.slice(0, 3).join(", ")}`,
      );
    const dataAsOf = listObservedAt(ctx);
    const files: EmittedFile[] = r.images.map((i) => ({
      path: i.path,
      body: i.png,
      extras: { artifact: `og:${i.name}`, rows: null, dataAsOf, schemaVersion: "1.0.0" },
    }));
    return { files, datedCopies: [] };
  },
};

/** Every emitter of a build, in run order. Adding a kind of published file = adding an entry here. */
export const EMITTERS: readonly Emitter[] = [
  duckdbEmitter,
  siteDataEmitter,
  ogImagesEmitter,
  datasetsEmitter,
  methodologyEmitter,
];
