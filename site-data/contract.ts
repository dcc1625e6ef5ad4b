import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { z } from "zod";

/** One file an artifact emits: path under the build, payload (validated against the schema), rows. */
export interface ArtifactFile {
  path: string;
  payload: unknown;
  rows: number;
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
  assemble(rows: Record<string, Record<string, unknown>[]>, ctx: ArtifactContext): { files: ArtifactFile[]; dataAsOf: number | null };
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

/** `YYYY-MM-DD` → Unix seconds at UTC midnight. */
export function daySeconds(date: unknown): number {
  return Date.parse(`${String(date).slice(0, 10)}T00:00:00Z`) / 1000;
}
