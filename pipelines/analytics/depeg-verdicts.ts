import type { ColumnType } from "../sources/column-type.ts";
import { type DepegEventRow, mergeIncidents } from "./depeg-detection.ts";

/**
 * Columns of one recorded verdict item: the verdict file's version and key (`verdicts/depeg-history/v<NNNN>.json`)
 * and sha256, the action (`delete` or `merge`), the event id and, for a merge, the event it merges into.
 * The build loads them as `operator_depeg_verdicts` (build/stages/load.ts) and the peg monitor reports each
 * as a `depeg_verdicts_applied` row with these columns plus `applied` and `note`.
 */
export const VERDICT_COLUMNS = {
  version: "BIGINT",
  key: "VARCHAR",
  sha256: "VARCHAR",
  action: "VARCHAR",
  event_id: "BIGINT",
  merge_into: "BIGINT",
} as const satisfies Record<string, ColumnType>;

/**
 * Reviewed operator verdicts on the depeg history (spec 4.5 `POST /api/audit-depeg-history` with
 * `dry-run=false`), applied by the next build to the incidents its detection produced. A verdict file
 * (build/depeg-verdicts.ts: `verdicts/depeg-history/v<NNNN>.json` in the data dir, write-once) is loaded
 * as rows of `operator_depeg_verdicts`, one per event id it names:
 *
 * - `delete`: the incident with `event_id` is dropped (a peak on a lone print, a coin too small to
 *   judge, …: the audit finding the operator reviewed).
 * - `merge`: the incidents with the `event_id`s of one `merge_into` group (same coin and direction)
 *   become one incident (mergeIncidents, in start order; the earliest keeps its id), a synthetic split of
 *   one episode repaired. Its `provenance.auditVerdict` names the verdict.
 *
 * A verdict whose incident the current rules no longer produce is not applied and reported so.
 */

/** One row of `operator_depeg_verdicts` (build/stages/load.ts): file version, storage key and content sha256. */
export interface DepegVerdictRow {
  version: number;
  key: string;
  sha256: string;
  action: "delete" | "merge";
  event_id: number;
  /** Merge group: the id the group keeps (its earliest event); null for `delete`. */
  merge_into: number | null;
}

/** What became of one verdict row in this build (`depeg_verdicts_applied`). */
export interface AppliedVerdict {
  version: number;
  key: string;
  sha256: string;
  action: "delete" | "merge";
  event_id: number;
  merge_into: number | null;
  applied: boolean;
  /** Why a row was not applied (`event-not-produced`, `merge-group-incomplete`, `merge-group-mixed`), else null. */
  note: string | null;
}

/**
 * Applies `verdicts` (any order; later versions after earlier ones) to one coin's `incidents` (those
 * of other coins are ignored). Merges first, then deletes, so deleting a merged group's kept id drops
 * the repaired incident. Returns the incidents sorted by start and the outcome of every verdict row
 * whose event is this coin's (`owned` tells which ids are the coin's: those produced now, plus the ids
 * the coin's rows name once merged away).
 */
export function applyDepegVerdicts(
  incidents: DepegEventRow[],
  verdicts: DepegVerdictRow[],
): { incidents: DepegEventRow[]; applied: AppliedVerdict[] } {
  const byId = new Map(incidents.map((e) => [e.id, e]));
  const mine = verdicts.filter((v) => byId.has(v.event_id) || (v.merge_into !== null && byId.has(v.merge_into)));
  const ordered = [...mine].sort((a, b) => a.version - b.version || a.event_id - b.event_id);
  const applied: AppliedVerdict[] = [];
  const outcome = (v: DepegVerdictRow, ok: boolean, note: string | null) =>
    applied.push({ ...v, applied: ok, note: ok ? null : note });
  // merges: one group per (version, merge_into)
  const groups = new Map<string, DepegVerdictRow[]>();
  for (const v of ordered.filter((r) => r.action === "merge")) {
    const k = `${v.version}|${v.merge_into}`;
    groups.set(k, [...(groups.get(k) ?? []), v]);
  }
  for (const rows of groups.values()) {
    const members = rows.map((r) => byId.get(r.event_id));
    const present = members.filter((m): m is DepegEventRow => m !== undefined);
    const sameKind = present.every(
      (m) => m.stablecoinId === present[0].stablecoinId && m.direction === present[0].direction,
    );
    if (present.length !== rows.length || present.length < 2 || !sameKind) {
      const note = present.length !== rows.length ? "merge-group-incomplete" : "merge-group-mixed";
      for (const r of rows) outcome(r, false, byId.has(r.event_id) ? note : "event-not-produced");
      continue;
    }
    const sorted = [...present].sort((a, b) => a.startedAt - b.startedAt || a.id - b.id);
    let merged = sorted[0];
    for (const next of sorted.slice(1)) merged = mergeIncidents(merged, next);
    merged = {
      ...merged,
      provenance: { ...merged.provenance, auditVerdict: `synthetic-split-merged:v${rows[0].version}` },
    };
    for (const m of sorted) byId.delete(m.id);
    byId.set(merged.id, merged);
    for (const r of rows) outcome(r, true, null);
  }
  for (const v of ordered.filter((r) => r.action === "delete")) {
    const ok = byId.delete(v.event_id);
    outcome(v, ok, "event-not-produced");
  }
  return {
    incidents: [...byId.values()].sort((a, b) => a.startedAt - b.startedAt || a.id - b.id),
    applied: applied.sort((a, b) => a.version - b.version || a.event_id - b.event_id),
  };
}
