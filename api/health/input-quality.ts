import type { BuildManifest } from "../../site-data/manifest.ts";
import { check } from "./causes.ts";
import { counts, sum } from "./format.ts";
import type { Check } from "./types.ts";

/** What a quality rejection producer's refusals mean for users (manifest `qualityRejections` keys). */
const REJECTION_MEANING: Record<string, string> = {
  peg_monitor:
    "refused price observations are used neither for consensus prices nor for depeg detection (one row per quote in `price_observation_rejections` of ballast.duckdb); `pending-expired-unconfirmed` counts moves that waited for a second independent source and expired unconfirmed, so no incident was published; `lone-contradicted-print` counts consensus prints kept in the price grid but not used as depeg evidence, because both neighbouring prints contradict them and nothing confirms them",
  supply_value_rejections:
    "implausible supply values are left out of every supply figure (rows in `supply_value_rejections` of ballast.duckdb)",
  supply_chain_guard:
    "chain rows of coins whose chains sum to more than their total are withheld from every chain figure; the coins are published with `supplyChainGuard` status `quarantined` (rows in `supply_chain_guard` of ballast.duckdb)",
};

/**
 * Input quality of build `m`, as notes without effect on status: malformed upstream values dropped
 * at load (`sources[].dropped`), recorded-file rows skipped by their reader (`readerDropped`), rows
 * refused by quality rules (`qualityRejections`, by producer, with what the refusals mean) and the
 * build's own notes (`warnings`).
 */
export function inputQualityCheck(
  m: Pick<BuildManifest, "sources" | "readerDropped" | "qualityRejections" | "warnings">,
): Check {
  const notes: string[] = [];
  const dropped = m.sources
    .filter((s) => sum(s.dropped) > 0)
    .map((s) => `${s.endpoint} ${sum(s.dropped)} (${counts(s.dropped)})`);
  if (dropped.length)
    notes.push(
      `malformed upstream values dropped at load (no effect on status): ${dropped.join("; ")}. Only the bad values or rows are left out; the rest of each payload is used (manifest \`sources[].dropped\`).`,
    );
  const skipped = Object.entries(m.readerDropped)
    .filter(([, r]) => sum(r) > 0)
    .map(([file, r]) => `${file} ${sum(r)} (${counts(r)})`);
  if (skipped.length)
    notes.push(
      `recorded-file rows skipped by their reader (no effect on status): ${skipped.join("; ")} (manifest \`readerDropped\`, first problems with line numbers in \`readerProblems\`).`,
    );
  for (const [producer, reasons] of Object.entries(m.qualityRejections ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (!sum(reasons)) continue;
    notes.push(
      `${producer} quality rules refused input (no effect on status): ${counts(reasons)}; ${REJECTION_MEANING[producer] ?? "refused rows are left out of its outputs"}.`,
    );
  }
  for (const w of m.warnings ?? []) notes.push(`build note (no effect on status): ${w}`);
  return check(undefined, { notes });
}
