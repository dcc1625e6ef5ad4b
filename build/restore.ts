import { BuildManifestSchema, type BuildManifest } from "../site-data/manifest.ts";
import { sha256 } from "./captures.ts";
import type { Sink } from "./sinks/sink.ts";
import { buildPrefix, manifestKeyOf, POINTER_KEY } from "./stages/publish.ts";
import { toJson } from "./stages/emit.ts";

/** What `restoreBuild` did: the build now serving and the one it replaced (null when none was). */
export interface RestoreResult {
  buildId: string;
  asOf: number;
  previousBuildId: string | null;
  /** Files whose bytes were checked against the manifest's sha256. */
  filesChecked: number;
}

/**
 * Points `latest.json` at the stored build `buildId` again (a rollback, or a restore after a bad
 * build), after checking it is complete: its manifest parses, and every file it lists exists with
 * the manifest's sha256. Serving instances follow within their pointer refresh (1 s). Nothing else
 * is written; the build must still be stored (retention keeps the newest `BALLAST_KEEP_BUILDS`).
 * @throws Error naming the build and the first missing or altered file; nothing is changed then.
 */
export async function restoreBuild(sink: Sink, buildId: string): Promise<RestoreResult> {
  const raw = await sink.get(manifestKeyOf(buildId));
  if (!raw)
    throw new Error(`build ${buildId}: no manifest at ${manifestKeyOf(buildId)} (not stored, or deleted by retention)`);
  let manifest: BuildManifest;
  try {
    manifest = BuildManifestSchema.parse(JSON.parse(Buffer.from(raw).toString("utf8")));
  } catch (err) {
    throw new Error(`build ${buildId}: manifest unreadable: ${(err as Error).message}`);
  }
  for (const f of manifest.files) {
    const bytes = await sink.get(`${buildPrefix(buildId)}${f.path}`);
    if (!bytes) throw new Error(`build ${buildId}: ${f.path} is missing; not restoring an incomplete build`);
    if (sha256(bytes) !== f.sha256)
      throw new Error(`build ${buildId}: ${f.path} does not match its manifest sha256; not restoring an altered build`);
  }
  const pointer = await sink.get(POINTER_KEY);
  const previousBuildId = pointer
    ? ((JSON.parse(Buffer.from(pointer).toString("utf8")) as { buildId?: string }).buildId ?? null)
    : null;
  await sink.put(
    POINTER_KEY,
    toJson({ buildId: manifest.buildId, asOf: manifest.asOf, manifest: manifestKeyOf(buildId) }),
  );
  return { buildId: manifest.buildId, asOf: manifest.asOf, previousBuildId, filesChecked: manifest.files.length };
}
