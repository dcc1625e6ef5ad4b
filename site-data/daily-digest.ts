import { z } from "zod";
import { createHash } from "node:crypto";
import { sqlArtifact } from "./contract.ts";
import { storedJson } from "./snapshot.ts";

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/**
 * A coin whose supply moved during the edition's day: circulating USD at the day's close on the supply
 * valuation rule (USD pegs at par, other fiat at the ECB rate, gold/NAV at the consensus price), change
 * in USD and %. Source: supply_history_daily (DefiLlama list/detail, CoinGecko market caps).
 */
const SupplyMoverSchema = z.object({
  stablecoinId: z.string(),
  symbol: z.string(),
  circulatingUsd: z.number(),
  changeUsd: z.number(),
  changePct: z.number().nullable(),
});

/**
 * A depeg incident whose start or end became known (was confirmed) during the day (spec 2.6 fields; times
 * Unix s, deviation in bps). `startedAt`/`endedAt` are the incident's own, possibly backdated instants;
 * `startConfirmedAt`/`endConfirmedAt` when detection established them. `endedAt`, `closeReason` and
 * `endConfirmedAt` are null while the end was not yet known at the window's end.
 */
const DigestIncidentSchema = z.object({
  id: z.number(),
  stablecoinId: z.string(),
  symbol: z.string(),
  direction: z.enum(["above", "below"]),
  peakDeviationBps: z.number().int(),
  startedAt: z.number().int(),
  endedAt: z.number().int().nullable(),
  closeReason: z.string().nullable(),
  confirmationSources: z.string().nullable(),
  startConfirmedAt: z
    .number()
    .int()
    .describe("Unix s at which detection confirmed the start (the confirming slot, ≥ startedAt)"),
  endConfirmedAt: z
    .number()
    .int()
    .nullable()
    .describe(
      "Unix s at which the end became known: endedAt for an observed close; for `orphan-tracking-removed` (endedAt = last observation + one cadence), once the coverage gap max(3 × cadence, 6 h) after the last observation has passed",
    ),
});

/** The stated basis of the supply figures: circulating supply, USD pegs at par (1 unit = 1 USD). */
const SUPPLY_BASIS = "circulating-usd-pegs-at-par";
/**
 * Market value beside the supply figures, labelled: DefiLlama's price-valued total of every asset it
 * tracks (`/stablecoincharts/all` `totalCirculatingUSD`) at the same two points; null without both.
 */
const MarketValueSchema = z.object({
  source: z.literal("defillama-all"),
  basis: z.literal("price-valued"),
  totalUsd: z.number(),
  previousTotalUsd: z.number(),
  changeUsd: z.number(),
  changePct: z.number().nullable(),
});

/** A freeze or destroy of the day (the largest by USD value at the event; amount null when unknown). */
const DigestFreezeSchema = z.object({
  id: z.string(),
  stablecoinId: z.string(),
  symbol: z.string(),
  chainId: z.string(),
  eventType: z.enum(["blacklist", "destroy"]),
  address: z.string(),
  amountUsd: z.number().nullable(),
  ts: z.number().int(),
  txHash: z.string(),
});

/**
 * A daily digest (`site-data/daily-digest.json`, `digests/<YYYY-MM-DD>.json`): what changed during UTC
 * day `date`, over the window (`windowStart`, `windowEnd`] = (D 00:00, D+1 00:00] Unix s, composed by a
 * build as of `asOf` ≥ windowEnd from the marts the API serves (no text service: `headline` is
 * assembled from the figures below). Sections: `supply` (total circulating supply at the window's two
 * 00:00 UTC points on one stated basis, `basis` = circulating supply with USD pegs at par, one aggregate
 * universe at both, the five largest per-coin moves, and DefiLlama's price-valued `marketValue` apart;
 * null when either point is missing), `depegIncidents` (whose start or end was confirmed in the window,
 * with their possibly backdated instants; open at its end),
 * `freezes` (blacklist/unblacklist/destroy counts, USD frozen and destroyed at event prices, the five
 * largest), `gradeChanges` (safety grade changes dated in the window), `stabilityIndex` (the PSI
 * reading dated D against D−1; null without one).
 */
export const DailyDigestSchema = z.object({
  date: Day,
  edition: z.literal("daily"),
  asOf: z.number().int(),
  windowStart: z.number().int(),
  windowEnd: z.number().int(),
  headline: z.string(),
  supply: z
    .object({
      date: Day,
      previousDate: Day,
      universe: z.enum(["ballast-listed", "defillama-all"]),
      basis: z
        .literal(SUPPLY_BASIS)
        .describe(
          "totalUsd, previousTotalUsd, changeUsd and changePct are circulating supply with USD pegs at par: `ballast-listed` sums the listed coins on the supply valuation rule (USD pegs 1 × units, other pegs at their reference rate); `defillama-all` takes DefiLlama's chart units (each peg's unit at 1), not its price-valued total (that is `marketValue`)",
        ),
      totalUsd: z.number(),
      previousTotalUsd: z.number(),
      changeUsd: z.number(),
      changePct: z.number().nullable(),
      movers: z.array(SupplyMoverSchema),
      marketValue: MarketValueSchema.nullable().describe(
        "DefiLlama's price-valued total (market value, not supply) at the same two points; null without both",
      ),
    })
    .nullable(),
  depegIncidents: z.object({
    opened: z.array(DigestIncidentSchema),
    closed: z.array(DigestIncidentSchema),
    openAtWindowEnd: z.number().int(),
  }),
  freezes: z.object({
    blacklisted: z.number().int(),
    unblacklisted: z.number().int(),
    destroyed: z.number().int(),
    frozenUsd: z.number(),
    destroyedUsd: z.number(),
    amountsMissing: z.number().int(),
    largest: z.array(DigestFreezeSchema),
  }),
  gradeChanges: z.array(
    z.object({
      stablecoinId: z.string(),
      symbol: z.string(),
      from: z.string(),
      to: z.string(),
      score: z.number().int().nullable(),
      previousScore: z.number().int().nullable(),
      date: z.number().int(),
      methodologyVersion: z.string(),
    }),
  ),
  stabilityIndex: z
    .object({
      date: Day,
      score: z.number(),
      band: z.string(),
      previousScore: z.number().nullable(),
      previousBand: z.string().nullable(),
      bandChanged: z.boolean(),
    })
    .nullable(),
});
export type DailyDigest = z.infer<typeof DailyDigestSchema>;

/**
 * `site-data/daily-digest.json`: the edition of the last UTC day closed at the build's as-of (a build as
 * of 2025-09-07T00:00Z publishes 2025-09-06), served by `/api/daily-digest`. Dated builds
 * (`build --from … --to …`) also store each day's edition as `digests/<day>.json`.
 */
export const dailyDigestArtifact = sqlArtifact(import.meta.url, {
  key: "daily-digest",
  schemaVersion: "1.1.0",
  maxAgeSec: 86400,
  description:
    "What changed during the last closed UTC day: supply moves, depeg incidents, freezes, grade changes, stability-index band.",
  path: "site-data/daily-digest.json",
  schema: DailyDigestSchema,
  sql: "daily_digest",
  shape: "one",
  dataAsOf: (d: DailyDigest) => d.windowEnd,
  route: {
    operationId: "getDailyDigest",
    path: "/api/daily-digest",
    cache: "standard",
    meta: true,
    tag: "digests",
    summary: "Latest daily digest",
    description: [
      "The digest of the last UTC day closed at the serving build's as-of: `{date, edition, asOf, windowStart, windowEnd, headline, supply, depegIncidents, freezes, gradeChanges, stabilityIndex, _meta}`.",
      "The window is (`date` 00:00, next day 00:00] UTC (Unix s), so observations stamped at the closing midnight belong to the day they close.",
      "`supply`: total circulating supply at the two 00:00 UTC points of the window on one stated basis (`basis`: circulating supply, USD pegs at par) from one aggregate universe (`ballast-listed`, else `defillama-all`), change in USD and %, the five largest per-coin moves, and `marketValue` (DefiLlama's price-valued total, labelled apart; null without it); null when either supply point is missing.",
      "`depegIncidents`: incidents (spec 2.6 fields, deviation in bps) whose start or end was confirmed in the window (`startConfirmedAt`, `endConfirmedAt`), with their possibly backdated `startedAt`/`endedAt`, and the count open at its end. `freezes`: blacklist, unblacklist and destroy counts, USD frozen and destroyed at event prices (`amountsMissing` events without an amount), the five largest.",
      "`gradeChanges`: safety grade changes dated in the window. `stabilityIndex`: the PSI reading dated `date` against the day before, `bandChanged`. `headline` is composed from these figures, deterministically.",
    ].join(" "),
  },
});

/** Storage key of the immutable digest of UTC day `day` (written with the day's snapshot): `digests/<YYYY-MM-DD>.json`. */
export const digestKey = (day: string) => `digests/${day}.json`;
/** Storage key of the digest archive; each published day adds its row. */
export const DIGEST_INDEX_KEY = "digests/index.json";

/** One archive row: the edition's day, headline, counts, PSI band change, and the stored file's sha256 and size. */
export const DigestIndexEntrySchema = z.object({
  date: Day,
  headline: z.string(),
  depegIncidentsOpened: z.number().int(),
  depegIncidentsClosed: z.number().int(),
  freezes: z.number().int().describe("blacklist + destroy events of the day"),
  gradeChanges: z.number().int(),
  stabilityIndexBandChanged: z.boolean(),
  contentHash: z.string(),
  byteSize: z.number().int(),
});
export const DigestIndexSchema = z.object({ digests: z.array(DigestIndexEntrySchema) });
/** `/api/digest-archive`: every dated edition, newest first. */
export const DigestArchiveSchema = DigestIndexSchema;

/** The archive row of stored digest bytes, or null when they fail DailyDigestSchema. */
export function digestIndexEntry(bytes: Uint8Array): z.infer<typeof DigestIndexEntrySchema> | null {
  const d = storedJson(bytes, DailyDigestSchema);
  if (!d) return null;
  return {
    date: d.date,
    headline: d.headline,
    depegIncidentsOpened: d.depegIncidents.opened.length,
    depegIncidentsClosed: d.depegIncidents.closed.length,
    freezes: d.freezes.blacklisted + d.freezes.destroyed,
    gradeChanges: d.gradeChanges.length,
    stabilityIndexBandChanged: d.stabilityIndex?.bandChanged ?? false,
    contentHash: createHash("sha256").update(bytes).digest("hex"),
    byteSize: bytes.byteLength,
  };
}
