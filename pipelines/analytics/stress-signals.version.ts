// Declarations of the stress-signals methodology that readers outside the analytic need (the changelog table,
// the site-data artifacts, hence the API server): version id, label, bands, signal weights and the day of a window, kept apart from the analytic
// (pipelines/analytics/stress-signals.ts) so that reading them loads no analytic code. Imports nothing.

/** Methodology version of the DEWS stress signals (changelog stress-signals.md). */
export const DEWS_VERSION = "ballast-dews-v1";

/** Human label of the DEWS methodology, published beside its version. */
export const DEWS_LABEL = "DEWS v1 (supply, price, divergence, blacklist, flow signals)";

/** One day, s. */
export const DAY = 86400;

/** Bands of a DEWS score, calmest first. */
export const DEWS_BANDS = ["CALM", "WATCH", "ALERT", "WARNING", "DANGER"] as const;

/** One band of DEWS_BANDS. */
export type DewsBand = (typeof DEWS_BANDS)[number];

/** Weights of the DEWS signals (sum 1.15): the base is their weighted mean over the available ones (`dewsBase`). */
export const SIGNAL_WEIGHTS = {
  supplyVelocity: 0.25,
  poolDrift: 0.2,
  liquidityErosion: 0.15,
  priceConfidence: 0.15,
  divergence: 0.15,
  blacklist: 0.1,
  mintBurnFlow: 0.1,
  yield: 0.05,
} as const;

/** Name of one DEWS signal. */
export type SignalName = keyof typeof SIGNAL_WEIGHTS;

/** 00:00 UTC (Unix s) of the day a slot ending at `slotTs` belongs to. */
export const slotDay = (slotTs: number) => Math.floor((slotTs - 1) / DAY) * DAY;

/** Last day (00:00 UTC) whose window is non-empty at `asOf`. */
export const lastDay = (asOf: number) => slotDay(asOf);
