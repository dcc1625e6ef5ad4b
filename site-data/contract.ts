import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import type { CacheProfile } from "./cache-profiles.ts";
import { must } from "../lib/must.ts";

/**
 * One file an artifact emits: path under the build, payload (validated against the schema), rows. A
 * file with `body` is published as those bytes instead (a serving layout derived from a validated
 * payload of the same artifact, e.g. site-data/blacklist-pages.ts); its `payload` is not checked.
 */
export interface ArtifactFile {
  path: string;
  payload: unknown;
  rows: number;
  body?: Uint8Array;
}

/**
 * One kind of file an artifact publishes: its path under the build and the schema of its payload.
 * `{id}` in the path stands for one file per entity (a stablecoin id, a chain id). Routes bind to
 * outputs (api/routes), so a file's path and schema are declared once, here.
 */
export interface ArtifactOutput {
  path: string;
  schema: z.ZodType;
}

/** Path of one file of `output`: `{id}` replaced by `id` (required when the template has one). */
export function outputPath(output: ArtifactOutput, id?: string): string {
  if (!output.path.includes("{id}")) return output.path;
  if (id === undefined) throw new Error(`output ${output.path} needs an id`);
  return output.path.replace("{id}", id);
}

/** Context of a build given to artifacts: as-of and the newest capture time per endpoint (Unix s). */
export interface ArtifactContext {
  asOf: number;
  sourceObservedAt: Record<string, number | null>;
}

/**
 * A site-data artifact: a zod schema per emitted file, SQL projections over the marts (files
 * beside the contract) and an assembler turning their rows into payloads. The API imports the
 * schema to validate what it serves; the build runs the projections.
 */
export interface Artifact {
  /** Cache key, as in health `caches` (spec 2.8), e.g. `stablecoins`. */
  key: string;
  schemaVersion: string;
  /** Freshness budget (max age, s) of the route serving it (spec 8). */
  maxAgeSec: number;
  /**
   * Published only when its source has rows (a third-party source that may have no capture yet): then
   * `assemble` returns no file, routes bound to it answer 503 `Data not yet available: <key>` and health
   * lists the feature as not yet available. Other artifacts always publish.
   */
  optional?: boolean;
  schema: z.ZodType;
  /** Files it publishes by output name (`main` for single-file artifacts). */
  outputs: Record<string, ArtifactOutput>;
  description: string;
  /** Projection name → SQL text. */
  queries: Record<string, string>;
  /**
   * Loads what `assemble` needs that the API server must not load (an analytic module: BuildTimeModule);
   * the emitter awaits it before `assemble`, which throws without it.
   */
  prepare?(): Promise<void>;
  assemble(
    rows: Record<string, Record<string, unknown>[]>,
    ctx: ArtifactContext,
  ): { files: ArtifactFile[]; dataAsOf: number | null };
}

/**
 * A module an artifact's `transform` needs only at build time (an analytic of pipelines/analytics/), loaded
 * by a dynamic import: the API server loads every artifact declaration for its routes and schemas, and
 * must load no analytic code. `load` (the artifact's `prepare`) imports it once; `get` returns it.
 */
export interface BuildTimeModule<M> {
  load(): Promise<void>;
  /** @throws Error naming the module when `load` was not awaited first. */
  get(): M;
}

/** A BuildTimeModule named `what` (for the error) over `importer`, e.g. `() => import("../pipelines/analytics/x.ts")`. */
export function buildTimeModule<M>(what: string, importer: () => Promise<M>): BuildTimeModule<M> {
  let loaded: M | undefined;
  return {
    async load() {
      loaded ??= await importer();
    },
    get() {
      if (loaded === undefined)
        throw new Error(`${what} is not loaded: await the artifact's prepare() before assemble`);
      return loaded;
    },
  };
}

/** Reads `<name>.sql` beside the module at `moduleUrl`. */
export function sqlFile(moduleUrl: string, name: string): string {
  return readFileSync(join(dirname(fileURLToPath(moduleUrl)), `${name}.sql`), "utf8");
}

/** JSON number or null: DuckDB JSON rows may carry doubles as numbers and big values as strings. */
export function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/**
 * A JSON number a row must carry (see `num`), e.g. a column its mart declares not null and the
 * payload schema requires. @throws Error naming `what` when it is null, missing or not finite (such a
 * payload would fail its schema and the build).
 */
export function requiredNum(v: unknown, what: string): number {
  return must(num(v), what);
}

/**
 * A DuckDB MAP as a JSON object: the rows carry a MAP as its entries, `[{ key, value }]` (in map
 * order); an object keyed by a value (a pegType, a chain name) is written in SQL as a MAP and turned
 * into the object by an artifact's transform.
 */
export function mapObject<V>(entries: readonly { key: string; value: V }[]): Record<string, V> {
  return Object.fromEntries(entries.map((e) => [e.key, e.value]));
}

/** `YYYY-MM-DD` → Unix seconds at UTC midnight. */
export function daySeconds(date: unknown): number {
  return Date.parse(`${String(date).slice(0, 10)}T00:00:00Z`) / 1000;
}

/**
 * The read route of an artifact declared with it (served by api/routes/artifact-routes.ts): a GET on
 * the API-key lane answering the artifact's `main` file as published (503 `Data not yet available`
 * while the build lacks it). `cache` is a Cache-Control profile name of api/lib/freshness.ts.
 */
export interface ArtifactRoute {
  operationId: string;
  path: string;
  summary: string;
  description: string;
  cache: CacheProfile;
  /** Adds the `_meta` freshness block (object payloads only). */
  meta: boolean;
  /** OpenAPI tag (default: the artifact key). */
  tag?: string;
}

/**
 * An artifact declared once, beside one SQL file whose columns already carry the wire names (nested
 * values as DuckDB structs and lists, integers cast to INTEGER or DOUBLE so they serialise as JSON
 * numbers): `one` takes the query's single row as the payload, `many` its rows as an array. With `{id}`
 * in `path` and `idColumn`, one file per entity: the rows grouped by that column (in query order, the
 * column left out), each group shaped as above. What SQL cannot express (an object keyed by a value,
 * a figure derived in TS) is a pure `transform` of the shaped rows, declared in the same module. With
 * `route`, the artifact also declares the route serving it. Found by file (site-data/artifacts.ts):
 * adding such an artifact is this declaration and its SQL, nothing else.
 */
export interface SqlArtifactDecl {
  key: string;
  schemaVersion: string;
  maxAgeSec: number;
  description: string;
  /** File under the build, e.g. `site-data/daily-digest.json`; `{id}` with `idColumn` for one file per entity. */
  path: string;
  schema: z.ZodType;
  /**
   * Schema routes read the published file with, when it differs from `schema` (the build's check), e.g.
   * rows a route validates one by one so a malformed row is dropped rather than the file refused.
   * Default: `schema`.
   */
  servedSchema?: z.ZodType;
  /** `<sql>.sql` beside the declaring module. */
  sql: string;
  shape: "one" | "many";
  /** With `{id}` in `path`: the column naming each row's file (one file per value, in query order). */
  idColumn?: string;
  /**
   * The payload of a file from its shaped rows (the single row for `one`, the rows for `many`), when SQL
   * cannot give it directly; pure (rows, the build's as-of and capture times only). Default: as shaped.
   */
  transform?(shaped: never, ctx: ArtifactContext): unknown;
  /**
   * Rows the manifest records for a file, given its payload and its shaped rows before `transform` (e.g.
   * a count the query gives beside the payload); default: the payload's length when an array, else the
   * query rows of the file.
   */
  rows?(payload: never, shaped: never): number;
  /**
   * Data time (Unix s) of the artifact: given the payload, the build context and the shaped rows before
   * `transform` (for `idColumn`, the payloads and shaped rows of every file, in order); default the
   * build's as-of.
   */
  dataAsOf?(payload: never, ctx: ArtifactContext, shaped: never): number | null;
  /** See Artifact.optional: with no row, no file is published. */
  optional?: boolean;
  /** See Artifact.prepare: loads the analytic `transform` uses (BuildTimeModule.load). */
  prepare?(): Promise<void>;
  /**
   * Files published after each file of the artifact, as bytes derived from its payload (a serving layout,
   * e.g. site-data/blacklist-pages.ts): path under the build and body, not checked against a schema; the
   * manifest records the rows of the file they derive from.
   */
  layout?(payload: never): { path: string; body: Uint8Array }[];
  route?: ArtifactRoute;
}

/** An artifact made from a SqlArtifactDecl; `route` is kept for the route table. */
export type SqlArtifact = Artifact & { route?: ArtifactRoute };

/**
 * Builds the Artifact of `decl` (see SqlArtifactDecl), reading `<decl.sql>.sql` beside `moduleUrl`.
 * The assembled payload is checked against `decl.schema` by the emitter like any artifact's.
 * @throws Error at declaration when `path` and `idColumn` disagree (one has `{id}`, not the other); at
 * emit time when a `one` query (or an entity's rows) is not exactly one row.
 */
export function sqlArtifact(moduleUrl: string, decl: SqlArtifactDecl): SqlArtifact {
  const output: ArtifactOutput = { path: decl.path, schema: decl.servedSchema ?? decl.schema };
  if (decl.path.includes("{id}") !== (decl.idColumn !== undefined))
    throw new Error(`artifact ${decl.key}: a path with {id} goes with idColumn, and only then`);
  const transform = decl.transform as ((shaped: unknown, ctx: ArtifactContext) => unknown) | undefined;
  const rowsOf = decl.rows as ((payload: unknown, shaped: unknown) => number) | undefined;
  const layout = decl.layout as ((payload: unknown) => { path: string; body: Uint8Array }[]) | undefined;
  const dataAsOf = decl.dataAsOf as
    | ((payload: unknown, ctx: ArtifactContext, shaped: unknown) => number | null)
    | undefined;
  const shape = (rows: Record<string, unknown>[], what: string) => {
    if (decl.shape === "many") return rows;
    if (rows.length !== 1)
      throw new Error(`artifact ${decl.key}: ${what} returned ${rows.length} rows, expected exactly one`);
    return rows[0];
  };
  return {
    key: decl.key,
    schemaVersion: decl.schemaVersion,
    maxAgeSec: decl.maxAgeSec,
    description: decl.description,
    schema: decl.schema,
    optional: decl.optional,
    outputs: { main: output },
    queries: { main: sqlFile(moduleUrl, decl.sql) },
    prepare: decl.prepare,
    route: decl.route,
    assemble(rows, ctx) {
      const main = rows.main;
      if (decl.optional && main.length === 0) return { files: [], dataAsOf: null };
      const groups = new Map<string | undefined, Record<string, unknown>[]>();
      if (decl.idColumn === undefined) groups.set(undefined, main);
      else {
        const column = decl.idColumn;
        for (const { [column]: id, ...row } of main) {
          const group = groups.get(String(id)) ?? [];
          group.push(row);
          groups.set(String(id), group);
        }
      }
      const shapedAll: unknown[] = [];
      const files: ArtifactFile[] = [...groups].map(([id, group]) => {
        const shaped = shape(group, id === undefined ? `${decl.sql}.sql` : `${decl.sql}.sql for ${id}`);
        shapedAll.push(shaped);
        const payload = transform ? transform(shaped, ctx) : shaped;
        const n = rowsOf ? rowsOf(payload, shaped) : Array.isArray(payload) ? payload.length : group.length;
        return { path: outputPath(output, id), payload, rows: n };
      });
      const published = layout
        ? files.flatMap((f) => [f, ...layout(f.payload).map((l) => ({ ...l, payload: null, rows: f.rows }))])
        : files;
      if (!dataAsOf) return { files: published, dataAsOf: ctx.asOf };
      return {
        files: published,
        dataAsOf:
          decl.idColumn === undefined
            ? dataAsOf(files[0].payload, ctx, shapedAll[0])
            : dataAsOf(
                files.map((f) => f.payload),
                ctx,
                shapedAll,
              ),
      };
    },
  };
}

/** Whether a module export is an Artifact (site-data/artifacts.ts discovers artifacts by this shape). */
export function isArtifact(x: unknown): x is Artifact {
  const a = x as Partial<Artifact> | null;
  return (
    typeof a === "object" &&
    a !== null &&
    typeof a.key === "string" &&
    typeof a.assemble === "function" &&
    typeof a.outputs === "object" &&
    typeof a.queries === "object"
  );
}
