// Declarations of the stability-index methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): version id, label and bands, kept apart from the analytic
// (pipelines/analytics/stability-index.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the stability index (changelog stability-index.md). */
export const PSI_VERSION = "ballast-stability-index-v1";

/** Human label of the stability index methodology, published beside its version. */
export const PSI_LABEL = "Stability index v1 (daily, open depeg incidents weighted by market cap)";

/** Bands of the index, best first. */
export const PSI_BANDS = ["BEDROCK", "STEADY", "TREMOR", "FRACTURE", "CRISIS", "MELTDOWN"] as const;

/** One band of PSI_BANDS. */
export type PsiBand = (typeof PSI_BANDS)[number];

/** Band of a score (inclusive lower bounds): BEDROCK ≥ 90, STEADY ≥ 75, TREMOR ≥ 60, FRACTURE ≥ 40, CRISIS ≥ 20, MELTDOWN below. */
export function psiBand(score: number): PsiBand {
  return score >= 90
    ? "BEDROCK"
    : score >= 75
      ? "STEADY"
      : score >= 60
        ? "TREMOR"
        : score >= 40
          ? "FRACTURE"
          : score >= 20
            ? "CRISIS"
            : "MELTDOWN";
}
