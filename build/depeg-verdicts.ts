import { createHash } from "node:crypto";
import { z } from "zod";
import type { DepegVerdictRow } from "../pipelines/analytics/depeg-verdicts.ts";
import type { Sink } from "./sinks/sink.ts";

/**
 * The recorded depeg-history verdicts: what an operator reviewed with `POST /api/audit-depeg-history`
 * (`dry-run=false`) and the next build applies (pipelines/analytics/depeg-verdicts.ts). Each recording
 * is one versioned file in the data dir, `verdicts/depeg-history/v<NNNN>.json` (4+ digits, 1 up),
 * written once and never rewritten, like the backfill provenance under `backfills/`: a later review
 * is a new version. A file carries its provenance: who (operator subject), when (wall clock, Unix s),
 * why (per item: the audit findings and the operator's action), the job's request id and the
 * serving build the audit read. Builds apply every version (dated snapshots never: they are composed
 * from captures alone and written once); the manifest's `depegVerdicts` lists what each applied.
 */

export const VERDICTS_PREFIX = "verdicts/depeg-history/";
export const VERDICTS_SCHEMA_VERSION = "1.0.0";

const EventId = z.number().int().nonnegative();
/** One recorded verdict file (`verdicts/depeg-history/v<NNNN>.json`). */
export const DepegVerdictFileSchema = z.object({
  schemaVersion: z.string(),
  version: z.number().int().positive(),
  /** Wall-clock time of the recording, Unix s. */
  recordedAt: z.number().int(),
  /** Operator identity subject (email or service-token client id). */
  recordedBy: z.string(),
  /** Operator-lane job request id that recorded it (null when recorded outside the API). */
  requestId: z.string().nullable(),
  /** The serving build whose audit the operator reviewed. */
  basis: z.object({ buildId: z.string().nullable(), asOf: z.number().int() }),
  deletes: z.array(
    z.object({ eventId: EventId, stablecoinId: z.string(), startedAt: z.number().int(), why: z.array(z.string()) }),
  ),
  merges: z.array(
    z.object({
      /** The id the merged incident keeps (the group's earliest event). */
      into: EventId,
      eventIds: z.array(EventId).min(2),
      stablecoinId: z.string(),
      why: z.array(z.string()),
    }),
  ),
});
export type DepegVerdictFile = z.infer<typeof DepegVerdictFileSchema>;

/** A verdict file as read: its storage key, sha256 of its bytes and its content. */
export interface StoredVerdictFile {
  key: string;
  sha256: string;
  file: DepegVerdictFile;
}

/** Where a build reads the recorded verdicts (build/effects.ts `LoadEffects.verdicts`). */
export interface DepegVerdictSource {
  /** Every recorded verdict file, by version ascending. Throws naming the key of an unreadable file. */
  read(): Promise<StoredVerdictFile[]>;
}

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
const versionOf = (key: string) => Number(/^verdicts\/depeg-history\/v(\d+)\.json$/.exec(key)?.[1] ?? Number.NaN);

/** Reads the verdict files of `sink` (schema-checked; a file whose version differs from its name is an error). */
export async function readDepegVerdicts(sink: Sink): Promise<StoredVerdictFile[]> {
  const keys = (await sink.list(VERDICTS_PREFIX)).filter((k) => Number.isInteger(versionOf(k)));
  const out: StoredVerdictFile[] = [];
  for (const key of keys.sort((a, b) => versionOf(a) - versionOf(b))) {
    const bytes = await sink.get(key);
    if (!bytes) continue;
    let file: DepegVerdictFile;
    try {
      file = DepegVerdictFileSchema.parse(JSON.parse(Buffer.from(bytes).toString("utf8")));
    } catch (err) {
      throw new Error(`depeg verdicts ${key}: unreadable (${(err as Error).message})`);
    }
    if (file.version !== versionOf(key)) throw new Error(`depeg verdicts ${key}: version ${file.version} in the file`);
    out.push({ key, sha256: sha256(bytes), file });
  }
  return out;
}

/** The verdicts of a data dir's sink as a build's source. */
export function sinkVerdicts(sink: Sink): DepegVerdictSource {
  return { read: () => readDepegVerdicts(sink) };
}

/**
 * Records `file` (without `version`) as the next version; never overwrites (throws when the key exists,
 * e.g. two recordings at once: the operator-lane `build` lock group runs one at a time). Returns the stored file.
 */
export async function recordDepegVerdicts(
  sink: Sink,
  file: Omit<DepegVerdictFile, "version" | "schemaVersion">,
): Promise<StoredVerdictFile> {
  const existing = (await sink.list(VERDICTS_PREFIX)).map(versionOf).filter(Number.isInteger);
  const version = Math.max(0, ...existing) + 1;
  const key = `${VERDICTS_PREFIX}v${String(version).padStart(4, "0")}.json`;
  if (await sink.get(key)) throw new Error(`depeg verdicts ${key}: already recorded (never rewritten)`);
  const full = DepegVerdictFileSchema.parse({ schemaVersion: VERDICTS_SCHEMA_VERSION, version, ...file });
  const body = `${JSON.stringify(full, null, 2)}\n`;
  await sink.put(key, body);
  return { key, sha256: sha256(body), file: full };
}

/** The `operator_depeg_verdicts` rows of stored files: one per deleted id and per member of a merge group. */
export function verdictRows(files: StoredVerdictFile[]): DepegVerdictRow[] {
  const rows: DepegVerdictRow[] = [];
  for (const { key, sha256: h, file } of files) {
    const base = { version: file.version, key, sha256: h };
    for (const d of file.deletes) rows.push({ ...base, action: "delete", event_id: d.eventId, merge_into: null });
    for (const m of file.merges)
      for (const id of m.eventIds) rows.push({ ...base, action: "merge", event_id: id, merge_into: m.into });
  }
  return rows;
}
