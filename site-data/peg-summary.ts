import { z } from "zod";
import { changelogPathOf } from "../pipelines/analytics/changelogs.ts";
import { mapObject, sqlArtifact } from "./contract.ts";

/** Methodology object (spec 2.5): versions, changelog link, as-of, whether the row used the current version. */
export const MethodologySchema = z.object({
  version: z.string(),
  versionLabel: z.string(),
  currentVersion: z.string(),
  currentVersionLabel: z.string(),
  changelogPath: z.string(),
  asOf: z.number().int(),
  isCurrent: z.boolean(),
});

/**
 * Builds the methodology object of the current version `version` (label `label`) as of `asOf`
 * (Unix s). `changelogPath` is the relative URL of the version's changelog
 * (`/methodology/<analytic>.md`, pipelines/analytics/changelogs.ts). Throws when no changelog
 * describes `version`.
 */
export function methodology(version: string, label: string, asOf: number): z.infer<typeof MethodologySchema> {
  return {
    version,
    versionLabel: label,
    currentVersion: version,
    currentVersionLabel: label,
    changelogPath: changelogPathOf(version),
    asOf,
    isCurrent: true,
  };
}

/**
 * Last 90 days: time at peg over the observed (priced) days (%), incidents, threshold crossings;
 * `observedDays` priced UTC days of the 90, `coveragePct` their share (%); `coverageLimited` when
 * tracking began inside the window or under 90% of its days were observed.
 */
const Recent90dSchema = z.object({
  pegPct: z.number().nullable(),
  incidentCount: z.number().int(),
  thresholdCrossingCount: z.number().int(),
  coverageLimited: z.boolean(),
  observedDays: z.number().int().nullable(),
  coveragePct: z.number().nullable(),
});

/** One coin of `/api/peg-summary`: peg score (0-100) and its parts, reference evidence, recent metrics. */
export const PegSummaryCoinSchema = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  pegType: z.string(),
  pegCurrency: z.string(),
  pegMechanism: z.string(),
  /** Current consensus deviation from the peg reference, bps (null without price or usable reference). */
  currentDeviationBps: z.number().int().nullable(),
  pegScore: z.number().int().min(0).max(100).nullable(),
  /**
   * Why pegScore is null (else null): `nav-token` (price follows a NAV, not judged against par),
   * `floating-peg` (no fixed target), `no-price`, `no-current-price`, `insufficient-history` (< 30 priced days).
   */
  pegScoreUnavailableReason: z
    .enum(["nav-token", "floating-peg", "no-price", "no-current-price", "insufficient-history"])
    .nullable(),
  pegPct: z.number().nullable(),
  severityScore: z.number().nullable(),
  spreadPenalty: z.number(),
  activePenalty: z.number(),
  eventCount: z.number().int(),
  worstDeviationBps: z.number().int().nullable(),
  activeDepeg: z.boolean(),
  lastEventAt: z.number().int().nullable(),
  trackingSpanDays: z.number().int(),
  observationStartedAt: z.number().int().nullable(),
  /** From the priced UTC days of the 4-year window: `full` (≥ 95% of its 1,461 days), `partial` (≥ 30), `early` (7-29), `insufficient` (< 7). */
  historyCoverage: z.enum(["full", "partial", "early", "insufficient"]),
  /** Priced UTC days in the 4-year window. */
  pricedDays: z.number().int(),
  /** Share of the 4-year window's days that were priced (%). */
  historyCoveragePct: z.number(),
  referenceEvidence: z.object({
    price: z.number().nullable(),
    priceConfidence: z.enum(["high", "single-source", "low", "fallback"]).nullable(),
    pegReference: z.number().nullable(),
    /** `par` (USD), `fx` (ECB rate ≤ 4 days old), `median` (≥ 3 same-peg peers), `fx-fallback` (stale, not judged), `missing`. */
    referenceSource: z.string().nullable(),
  }),
  recent90d: Recent90dSchema,
  methodologyVersion: z.string(),
});

export const PegSummaryPayloadSchema = z.object({
  coins: z.array(PegSummaryCoinSchema),
  summary: z.object({
    activeDepegCount: z.number().int(),
    medianDeviationBps: z.number().int().nullable(),
    worstCurrent: z.object({ id: z.string(), symbol: z.string(), bps: z.number().int() }).nullable(),
    coinsAtPeg: z.number().int(),
    totalTracked: z.number().int(),
    depegEventsToday: z.number().int(),
    depegEventsYesterday: z.number().int(),
    fallbackPegRates: z.record(z.string(), z.number()),
  }),
  methodology: MethodologySchema,
});

type PegSummaryPayload = z.infer<typeof PegSummaryPayloadSchema>;
type PegSummaryCoin = z.infer<typeof PegSummaryCoinSchema>;

/** The row of peg_summary.sql: the coins (`recent90d` as JSON text), the day counts and the fallback rates as MAP entries. */
type PegSummaryRow = {
  coins: (Omit<PegSummaryCoin, "recent90d"> & { recent90d: string })[];
  depegEventsToday: number;
  depegEventsYesterday: number;
  fallbackPegRates: { key: string; value: number }[];
};

/** Deviation (bps, absolute) under which a coin is at peg: 100 for USD pegs, 150 for others. */
const THRESHOLD = (pegType: string) => (pegType === "peggedUSD" ? 100 : 150);

/**
 * The aggregate peg picture of `coins` (those with a current deviation): active depegs, the median
 * absolute deviation (bps, rounded), the worst coin (the first of the largest), coins at peg.
 */
function pegSummary(coins: PegSummaryCoin[], row: PegSummaryRow): PegSummaryPayload["summary"] {
  const withDev = coins.filter(
    (c): c is PegSummaryCoin & { currentDeviationBps: number } => c.currentDeviationBps !== null,
  );
  const abs = withDev.map((c) => Math.abs(c.currentDeviationBps)).sort((a, b) => a - b);
  const median = abs.length
    ? Math.round(abs.length % 2 ? abs[abs.length >> 1] : (abs[abs.length / 2 - 1] + abs[abs.length / 2]) / 2)
    : null;
  const worst = withDev.reduce<(typeof withDev)[number] | null>(
    (w, c) => (!w || Math.abs(c.currentDeviationBps) > Math.abs(w.currentDeviationBps) ? c : w),
    null,
  );
  return {
    activeDepegCount: coins.filter((c) => c.activeDepeg).length,
    medianDeviationBps: median,
    worstCurrent: worst ? { id: worst.id, symbol: worst.symbol, bps: worst.currentDeviationBps } : null,
    coinsAtPeg: withDev.filter((c) => Math.abs(c.currentDeviationBps) < THRESHOLD(c.pegType)).length,
    totalTracked: withDev.length,
    depegEventsToday: row.depegEventsToday,
    depegEventsYesterday: row.depegEventsYesterday,
    fallbackPegRates: mapObject(row.fallbackPegRates),
  };
}

/** `site-data/peg-summary.json` — peg scores of every listed coin and the aggregate peg picture. */
export const pegSummaryArtifact = sqlArtifact(import.meta.url, {
  key: "peg-summary",
  schemaVersion: "1.0.0",
  maxAgeSec: 900,
  description: "Per-coin peg scores, reference evidence and recent metrics; aggregate summary.",
  path: "site-data/peg-summary.json",
  schema: PegSummaryPayloadSchema,
  sql: "peg_summary",
  shape: "one",
  // recent90d is a JSON document in the mart; the summary and the methodology are computed in TS
  transform: (row: PegSummaryRow, ctx): PegSummaryPayload => {
    const coins = row.coins.map((c) => ({ ...c, recent90d: JSON.parse(c.recent90d) }));
    return {
      coins,
      summary: pegSummary(coins, row),
      methodology: methodology(
        coins[0]?.methodologyVersion ?? "ballast-peg-score-v3",
        "Peg score v3 (4-year window, observed days only)",
        ctx.asOf,
      ),
    };
  },
  rows: (payload: PegSummaryPayload) => payload.coins.length,
  dataAsOf: (_payload, ctx) => ctx.sourceObservedAt["defillama.stablecoins"] ?? null,
});
