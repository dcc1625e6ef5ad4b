import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SourceDeclaration } from "./types.ts";

/**
 * Sources found by file: every folder `pipelines/sources/<name>/` holds one source, declared by the
 * one SourceDeclaration its `source.ts` exports, beside the source's code and its staging SQL
 * (`stg_<name>__<entity>.sql`, found by build/models.ts). Folders starting with `_` or `.` are not
 * sources. The shared modules (types, http-client, file-formats, time, …) are the files of
 * `pipelines/sources/` itself.
 */

/** Whether an exported value is a source declaration (`kind: "source"`). */
export function isSourceDeclaration(v: unknown): v is SourceDeclaration {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "source";
}

/**
 * The source folders of `dir` (names in order; folders starting with `_` or `.` are skipped).
 * Synchronous, for callers that only need the folders (e.g. model discovery).
 */
export function sourceFolders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("_") && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
}

/**
 * Every source declared under `dir`, in folder-name order.
 * @throws Error naming the folder when it has no `source.ts`, when that module does not export
 *   exactly one SourceDeclaration, when the declaration's `name` is not the folder's, when one of
 *   its endpoints has another `source` or a key outside `<name>.`, when an endpoint has no bad-row
 *   fixture, when a recorded capture names an endpoint of another source, or when two sources declare
 *   one endpoint key.
 */
export async function discoverSources(dir: string): Promise<SourceDeclaration[]> {
  const found: SourceDeclaration[] = [];
  const keys = new Map<string, string>();
  for (const name of sourceFolders(dir)) {
    const file = join(dir, name, "source.ts");
    if (!existsSync(file)) throw new Error(`source folder pipelines/sources/${name} has no source.ts`);
    const decls = Object.values((await import(pathToFileURL(file).href)) as Record<string, unknown>).filter(
      isSourceDeclaration,
    );
    if (decls.length !== 1)
      throw new Error(`pipelines/sources/${name}/source.ts exports ${decls.length} source declarations, not one`);
    const [s] = decls;
    if (s.name !== name) throw new Error(`pipelines/sources/${name}/source.ts declares source ${s.name}`);
    for (const e of s.endpoints) {
      if (e.source !== name || !e.key.startsWith(`${name}.`))
        throw new Error(`source ${name}: endpoint ${e.key} (source ${e.source}) belongs to another source`);
      if (keys.has(e.key)) throw new Error(`sources ${keys.get(e.key)} and ${name} both declare endpoint ${e.key}`);
      keys.set(e.key, name);
      if (!s.badRows[e.key]) throw new Error(`source ${name}: endpoint ${e.key} has no bad-row fixture (badRows)`);
    }
    for (const rc of s.recorded ?? [])
      if (!s.endpoints.some((e) => e.key === rc.endpoint))
        throw new Error(
          `source ${name}: recorded file ${rc.file} is read into ${rc.endpoint}, not one of its endpoints`,
        );
    found.push(s);
  }
  return found;
}

/** Folder of the source folders (this module's own). */
export const SOURCES_DIR: string = dirname(fileURLToPath(import.meta.url));

/** Every source of the build, discovered from `pipelines/sources/<name>/source.ts`. */
export const SOURCES: SourceDeclaration[] = await discoverSources(SOURCES_DIR);

/**
 * Circuit group of a source: the lineage family of its endpoints whose rows carry the source's own
 * label (no `rowSource`), e.g. `alchemy` → `coingecko`, `frankfurter` → `ecb`, `usds` → `onchain`.
 * Circuits of one group fail together (one upstream behind them). Without such an endpoint, the
 * family of all its endpoints.
 * @throws Error when those endpoints declare different families (or there is none).
 */
export function circuitGroupOf(s: Pick<SourceDeclaration, "name" | "endpoints">): string {
  const own = s.endpoints.filter((e) => e.rowSource === undefined);
  const families = [...new Set((own.length ? own : s.endpoints).map((e) => e.lineage.family))];
  if (families.length !== 1)
    throw new Error(
      `source ${s.name}: its endpoints declare ${families.length} lineage families (${families.join(", ")})`,
    );
  return families[0];
}

/**
 * Circuit name (source name) → circuit group, for every declared source (health's `circuit-groups-open`
 * counts open groups, not circuits). Names not listed are their own group.
 */
export const SOURCE_CIRCUIT_GROUPS: Readonly<Record<string, string>> = circuitGroupsOf(SOURCES);

/** Source (circuit) name → circuit group (circuitGroupOf) of every source of `sources`. */
export function circuitGroupsOf(
  sources: readonly Pick<SourceDeclaration, "name" | "endpoints">[],
): Record<string, string> {
  return Object.fromEntries(sources.map((s) => [s.name, circuitGroupOf(s)]));
}
