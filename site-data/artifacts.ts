import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { type Artifact, isArtifact } from "./contract.ts";

/** Modules of site-data/ that hold no artifact (contracts, the snapshot envelope, this file). */
const NOT_ARTIFACT_MODULES = new Set(["artifacts.ts", "contract.ts", "manifest.ts", "snapshot.ts", "og-images.ts"]);

/**
 * Every artifact exported by the modules of `dir`, found by file like the SQL models: modules in
 * file-name order, each module's artifacts in export order.
 * @throws Error when two artifacts share a key or an output path.
 */
export async function discoverArtifacts(dir: string): Promise<Artifact[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".ts") && !NOT_ARTIFACT_MODULES.has(f))
    .sort();
  const found: Artifact[] = [];
  for (const f of files) {
    const mod = (await import(`${dir}/${f}`)) as Record<string, unknown>;
    found.push(...Object.values(mod).filter(isArtifact));
  }
  const keys = new Map<string, string>(),
    paths = new Map<string, string>();
  for (const a of found) {
    if (keys.has(a.key)) throw new Error(`two site-data artifacts share the key ${a.key}`);
    keys.set(a.key, a.key);
    for (const o of Object.values(a.outputs)) {
      if (paths.has(o.path)) throw new Error(`artifacts ${paths.get(o.path)} and ${a.key} both publish ${o.path}`);
      paths.set(o.path, a.key);
    }
  }
  return found;
}

/**
 * Every site-data artifact a build emits, discovered from the exports of `site-data/*.ts`: adding an
 * artifact is declaring it in a module here (with its SQL beside it), never editing a list.
 */
export const SITE_DATA_ARTIFACTS: Artifact[] = await discoverArtifacts(dirname(fileURLToPath(import.meta.url)));
