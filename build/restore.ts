import { BuildManifestSchema, type BuildManifest } from "../site-data/manifest.ts";
import { sha256 } from "./captures.ts";
import { ENCODING_SUFFIX, encodeBody, isCompressible, STORED_ENCODINGS } from "./precompress.ts";
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
  /** Dated dataset files (`datasets/<topic>/<YYYY-MM-DD>.<fmt>`) the build's datapackages name, checked against their `hash`. */
  datedChecked: number;
  /** Of those, the keys that were not stored (pruned or never written) and were written from the build folder. */
  datedRepublished: string[];
  /** The replaced `latest.json` was stored but unreadable (not JSON, or no `buildId`): `previousBuildId` is then null. */
  previousPointerUnreadable: boolean;
}

/** The build id a stored `latest.json` names: null when none is stored, `undefined` when its bytes are unreadable. */
function pointedBuildId(pointer: Uint8Array | null): string | null | undefined {
  if (!pointer) return null;
  try {
    const id = (JSON.parse(Buffer.from(pointer).toString("utf8")) as { buildId?: unknown } | null)?.buildId;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** `datasets/<topic>/datapackage.json` of a build: topic from the path, resources' path and hash. */
const DATAPACKAGE = /^datasets\/([^/]+)\/datapackage\.json$/;

/**
 * The dated files the build's datapackages describe: for each resource whose `path` is a day
 * (`<YYYY-MM-DD>.<fmt>`, served from storage outside the build folder), the key, the sha256 its `hash`
 * states and the build file holding the same bytes. `latest.<fmt>` resources are files of the build
 * itself, covered by the manifest check.
 */
async function describedDatedFiles(
  sink: Sink,
  buildId: string,
  manifest: BuildManifest,
): Promise<{ key: string; sha256: string; buildFile: string }[]> {
  const out: { key: string; sha256: string; buildFile: string }[] = [];
  for (const f of manifest.files) {
    const topic = DATAPACKAGE.exec(f.path)?.[1];
    if (!topic) continue;
    const bytes = await sink.get(`${buildPrefix(buildId)}${f.path}`);
    const pkg = JSON.parse(Buffer.from(bytes ?? "{}").toString("utf8")) as {
      resources?: { path: string; hash: string }[];
    };
    for (const r of pkg.resources ?? []) {
      if (!/^\d{4}-\d{2}-\d{2}\.[a-z]+$/.test(r.path)) continue;
      const key = `datasets/${topic}/${r.path}`;
      out.push({ key, sha256: r.hash.replace(/^sha256:/, ""), buildFile: `${buildPrefix(buildId)}${key}` });
    }
  }
  return out;
}

/**
 * Points `latest.json` at the stored build `buildId` again (a rollback, or a restore after a bad
 * build), after checking it is complete: its manifest parses, every file it lists exists with the
 * manifest's sha256, and every dated file its datapackages name (`datasets/<topic>/<day>.<fmt>`, the
 * day's files this build published first) is stored with the descriptor's hash. Dated files are
 * write-once, so a restore never rewrites one: a named dated file that is no longer stored (pruned by
 * retention) is written again from the build folder (same bytes, `.br`/`.gz` siblings first). Serving
 * instances follow within their pointer refresh (1 s); `latest.*` and `datapackage.json` are the
 * build's own files. The build must still be stored (retention keeps the newest `BALLAST_KEEP_BUILDS`).
 * @throws Error naming the build and the first missing or altered file, or a dated file stored with
 * other bytes than its datapackage states; nothing is changed then.
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
  const dated = await describedDatedFiles(sink, buildId, manifest);
  const missing: { key: string; bytes: Uint8Array }[] = [];
  for (const d of dated) {
    const stored = await sink.get(d.key);
    if (stored) {
      if (sha256(stored) !== d.sha256)
        throw new Error(
          `build ${buildId}: ${d.key} is stored with other bytes than its datapackage.json states; not restoring (dated files are write-once)`,
        );
      continue;
    }
    const own = await sink.get(d.buildFile);
    if (!own || sha256(own) !== d.sha256)
      throw new Error(`build ${buildId}: its datapackage names ${d.key}, but the build folder has no such file`);
    missing.push({ key: d.key, bytes: own });
  }
  for (const m of missing) {
    if (isCompressible(m.key)) {
      const encoded = await encodeBody(m.bytes);
      for (const enc of STORED_ENCODINGS) await sink.put(`${m.key}${ENCODING_SUFFIX[enc]}`, encoded[enc]);
    }
    await sink.put(m.key, m.bytes);
  }
  // The pointer being replaced is only reported: a corrupt one (the case a restore is for) is overwritten.
  const previous = pointedBuildId(await sink.get(POINTER_KEY));
  await sink.put(
    POINTER_KEY,
    toJson({ buildId: manifest.buildId, asOf: manifest.asOf, manifest: manifestKeyOf(buildId) }),
  );
  return {
    buildId: manifest.buildId,
    asOf: manifest.asOf,
    previousBuildId: previous ?? null,
    previousPointerUnreadable: previous === undefined,
    filesChecked: manifest.files.length,
    datedChecked: dated.length,
    datedRepublished: missing.map((m) => m.key),
  };
}
