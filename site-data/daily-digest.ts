import { z } from "zod";
import { createHash } from "node:crypto";
import { sqlArtifact } from "./contract.ts";
import { storedJson } from "./snapshot.ts";

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** A coin whose supply moved during the edition's day (USD at the day's close, change in USD and %). */
const SupplyMoverSchema = z.object({
  stablecoinId: z.string(),
  symbol: z.string(),
  circulatingUsd: z.number(),
  changeUsd: z.number(),
  changePct: z.number().nullable(),
});

/** A depeg incident opened or closed during the day (spec 2.6 fields; times Unix s, deviation in bps). */
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
 * assembled from the figures below). Sections: `supply` (total circulating USD at the window's two
 * 00:00 UTC points, one aggregate universe at both, and the five largest per-coin moves; null when
 * either point is missing), `depegIncidents` (opened and closed in the window, open at its end),
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
      totalUsd: z.number(),
      previousTotalUsd: z.number(),
      changeUsd: z.number(),
      changePct: z.number().nullable(),
      movers: z.array(SupplyMoverSchema),
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
  schemaVersion: "1.0.0",
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
      "`supply`: total circulating USD at the two 00:00 UTC points of the window from one aggregate universe (`ballast-listed`, else `defillama-all`), change in USD and %, and the five largest per-coin moves (null when either point is missing).",
      "`depegIncidents`: incidents (spec 2.6 fields, deviation in bps) that opened or closed in the window and the count open at its end. `freezes`: blacklist, unblacklist and destroy counts, USD frozen and destroyed at event prices (`amountsMissing` events without an amount), the five largest.",
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
