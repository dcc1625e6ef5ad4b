import { sourceFamily } from "../sources/lineage.ts";
import { type Analytic, inputsAs } from "./contract.ts";

/**
 * Build-time lineage check (`ballast-lineage-check-v1`, changelog `source-lineage-check.md`): independence is declared, and this measures
 * it. For every pair of daily price series (source labels of `stg_prices__daily`) quoting the same coin
 * (CoinGecko id) in a calendar year, the shared 00:00 UTC days and the days whose USD prices agree to
 * within 1e-9. A pair agreeing on ≥ 95% of ≥ 30 shared days is one family by evidence: verdict
 * `declared-same-family` when lineage.ts already gives both one family, `undeclared-copy` otherwise
 * (the build adds a manifest warning naming the pair; the declaration must be fixed). Pairs below the
 * bar are `independent-by-evidence` (which proves nothing about their upstreams).
 * Output `source_lineage_check`: source_a < source_b, gecko_id, year, shared_days, equal_days,
 * equal_share (0-1), family_a, family_b, verdict.
 */
export { LINEAGE_CHECK_VERSION } from "./source-lineage-version.ts";
export const LINEAGE_EQUAL_TOLERANCE = 1e-9;
export const LINEAGE_MIN_SHARED_DAYS = 30;
export const LINEAGE_COPY_SHARE = 0.95;

/** Verdict of one measured pair of series (see module docs). */
export function lineageVerdict(
  sharedDays: number,
  equalDays: number,
  familyA: string,
  familyB: string,
): "declared-same-family" | "undeclared-copy" | "independent-by-evidence" {
  const copy = sharedDays >= LINEAGE_MIN_SHARED_DAYS && equalDays >= LINEAGE_COPY_SHARE * sharedDays;
  if (!copy) return "independent-by-evidence";
  return familyA === familyB ? "declared-same-family" : "undeclared-copy";
}

/** One measured pair of daily series (columns of the `pairs` select). */
interface LineagePairRow {
  source_a: string;
  source_b: string;
  gecko_id: string;
  year: number;
  shared_days: number;
  equal_days: number;
}

export const sourceLineageCheck: Analytic = {
  name: "source_lineage_check",
  inputs: {
    pairs: `select a.source as source_a, b.source as source_b, a.gecko_id, year(a.date)::integer as year, count(*)::integer as shared_days,
            (count(*) filter (where abs(a.price_usd - b.price_usd) <= ${LINEAGE_EQUAL_TOLERANCE}))::integer as equal_days
          from stg_prices__daily a
          inner join stg_prices__daily b on b.gecko_id = a.gecko_id and b.date = a.date and a.source < b.source
          group by all
          order by source_a, source_b, gecko_id, year`,
  },
  outputs: {
    source_lineage_check: {
      source_a: "VARCHAR",
      source_b: "VARCHAR",
      gecko_id: "VARCHAR",
      year: "BIGINT",
      shared_days: "BIGINT",
      equal_days: "BIGINT",
      equal_share: "DOUBLE",
      family_a: "VARCHAR",
      family_b: "VARCHAR",
      verdict: "VARCHAR",
    },
  },
  run(selected) {
    const inputs = inputsAs<{ pairs: LineagePairRow }>(selected);
    const rows = inputs.pairs.map((r) => {
      const familyA = sourceFamily(r.source_a),
        familyB = sourceFamily(r.source_b);
      return {
        ...r,
        equal_share: r.shared_days ? r.equal_days / r.shared_days : 0,
        family_a: familyA,
        family_b: familyB,
        verdict: lineageVerdict(r.shared_days, r.equal_days, familyA, familyB),
      };
    });
    return { tables: { source_lineage_check: rows } };
  },
};
