import { createHash } from "node:crypto";
import { z } from "zod";
import { DewsCoinSchema } from "./stress-signals.ts";
import { DepegEventSchema } from "./depeg-events.ts";
import { DexLiquidityRowSchema } from "./dex-liquidity.ts";
import { ReportCardSchema } from "./report-cards.ts";
import { PsiCurrentSchema } from "./stability-index.ts";

/** Version of the dated snapshot envelope below. */
export const SNAPSHOT_VERSION = 1;

/** A UTC day `YYYY-MM-DD` that exists on the calendar (2023-02-30 does not). */
export const CalendarDaySchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be YYYY-MM-DD")
  .refine((d) => {
    const t = Date.parse(`${d}T00:00:00Z`);
    return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d;
  }, "must be a real calendar date");

/** Stored JSON bytes (a dated snapshot, digest or index) parsed and checked against `schema`: null when they are not JSON or fail it. */
export function storedJson<T>(bytes: Uint8Array, schema: z.ZodType<T>): T | null {
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(bytes).toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Storage key of the immutable snapshot of UTC day `day`: `snapshots/<YYYY-MM-DD>.json` (outside build folders). */
export const snapshotKey = (day: string) => `snapshots/${day}.json`;
/** Storage key of the researchers' DuckDB file of UTC day `day`: `snapshots/<YYYY-MM-DD>/ballast.duckdb`, served at `/snapshots/<day>/ballast.duckdb`. */
export const snapshotDatabaseKey = (day: string) => `snapshots/${day}/ballast.duckdb`;
/** Storage key of the snapshot index; each published day adds its row. */
export const SNAPSHOT_INDEX_KEY = "snapshots/index.json";

/** One coin as the snapshot day closed: identity, price (USD) and supply (USD). */
export const SnapshotStablecoinSchema = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  pegType: z.string(),
  pegMechanism: z.string(),
  price: z
    .number()
    .nullable()
    .describe("USD consensus price at the snapshot's as-of; null with priceUnavailableReason"),
  priceConfidence: z.enum(["high", "single-source", "low", "fallback"]).nullable(),
  priceSource: z.string(),
  priceUnavailableReason: z.enum(["no-observation", "stale-beyond-window"]).nullable(),
  circulatingUsd: z.number().nullable().describe("USD: current supply; null when unobserved"),
  circulating: z.record(z.string(), z.number()).describe("USD supply keyed by pegType (spec 2.2)"),
  chains: z.array(z.string()),
  supplySource: z.string().nullable(),
});
export type SnapshotStablecoin = z.infer<typeof SnapshotStablecoinSchema>;

/**
 * Share of the listed coins a per-coin section must cover before it counts as covered: a section
 * covering fewer (`covered < SECTION_COVERAGE_FLOOR × of`) names its coverage in `unavailable`.
 */
export const SECTION_COVERAGE_FLOOR = 0.9;

/** How many of the snapshot's listed coins a per-coin section has a value for, and which. */
export const SectionCoverageSchema = z.object({
  covered: z.number().int(),
  of: z.number().int(),
  coins: z.array(z.string()).describe("ids of the covered coins, in list order"),
});
export type SectionCoverage = z.infer<typeof SectionCoverageSchema>;

/** What each per-coin section of a snapshot needs from one listed coin. */
const SECTION_TEST = {
  price: { has: (c: CoverageCoin) => c.price !== null, what: "a current price", note: "" },
  supply: { has: (c: CoverageCoin) => c.circulating[c.pegType] !== undefined, what: "a circulating supply", note: "" },
  chains: {
    has: (c: CoverageCoin) => c.chains.length > 0,
    what: "a per-chain supply breakdown",
    note: ": the chain tables and chain totals hold only these coins",
  },
} as const;
type CoverageCoin = {
  id: string;
  symbol: string;
  pegType: string;
  price: number | null;
  circulating: Record<string, number>;
  chains: string[];
};

/**
 * Coverage of the per-coin sections (`price`, `supply`, `chains`) over the listed coins of a snapshot
 * (the `/stablecoins` list rows). Pure.
 */
export function sectionCoverage(
  coins: readonly CoverageCoin[],
): Record<keyof typeof SECTION_TEST, SectionCoverage & { symbols: string[] }> {
  const of = (k: keyof typeof SECTION_TEST): SectionCoverage & { symbols: string[] } => {
    const covered = coins.filter(SECTION_TEST[k].has);
    return {
      covered: covered.length,
      of: coins.length,
      coins: covered.map((c) => c.id),
      symbols: covered.map((c) => c.symbol),
    };
  };
  return { price: of("price"), supply: of("supply"), chains: of("chains") };
}

/**
 * The `unavailable` entries of thin sections: one per section covering fewer than
 * {@link SECTION_COVERAGE_FLOOR} of the listed coins, e.g. `chains: "1 of 16 listed coins have a
 * per-chain supply breakdown … (USDC); the others have none as of this day"`.
 */
export function thinSections(
  coverage: Record<keyof typeof SECTION_TEST, SectionCoverage & { symbols: string[] }>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, c] of Object.entries(coverage) as [
    keyof typeof SECTION_TEST,
    SectionCoverage & { symbols: string[] },
  ][])
    if (c.covered < SECTION_COVERAGE_FLOOR * c.of)
      out[k] =
        `${c.covered} of ${c.of} listed coins have ${SECTION_TEST[k].what}${c.covered ? ` (${c.symbols.join(", ")})` : ""}; the others have none as of this day${c.covered ? SECTION_TEST[k].note : ""}`;
  return out;
}

/**
 * `snapshots/<YYYY-MM-DD>.json`: the immutable public record of one UTC day, built as of the day's close
 * (`asOf` = the next day's 00:00:00Z, Unix s; `generatedAt` = asOf so a rebuild is byte-identical). It names
 * what it came from (`buildId` of the emitted artifacts, `methodologyVersions`, every input capture
 * with its sha256) and carries the coins, FX fallback rates, report cards, PSI, DEWS, DEX liquidity and
 * the depeg incidents open at as-of or started that day. A section whose input did not exist that day
 * is null or empty and named in `unavailable` (section → reason); nothing is invented. `coverage` counts
 * the listed coins each per-coin section (price, supply, chains) covers; a section under
 * {@link SECTION_COVERAGE_FLOOR} of them is named in `unavailable` with its coverage too.
 */
export const SnapshotSchema = z.object({
  version: z.literal(SNAPSHOT_VERSION),
  snapshotDate: CalendarDaySchema,
  asOf: z.number().int(),
  generatedAt: z.number().int(),
  buildId: z.string(),
  methodologyVersions: z.record(z.string(), z.string()),
  inputs: z.array(z.object({ endpoint: z.string(), path: z.string(), sha256: z.string(), observedAt: z.number() })),
  stablecoins: z.array(SnapshotStablecoinSchema),
  fxFallbackRates: z.record(z.string(), z.number()),
  reportCards: z.array(ReportCardSchema),
  psi: PsiCurrentSchema.nullable(),
  dews: z.array(DewsCoinSchema),
  liquidity: z.array(DexLiquidityRowSchema),
  depegIncidents: z.array(DepegEventSchema),
  unavailable: z.record(z.string(), z.string()),
  coverage: z
    .object({ price: SectionCoverageSchema, supply: SectionCoverageSchema, chains: SectionCoverageSchema })
    .optional()
    .describe("listed coins each per-coin section covers (absent in snapshots stored before it was added)"),
});
export type Snapshot = z.infer<typeof SnapshotSchema>;

/** `previousChainHash` of the first row of the snapshot chain (chainIndex 0): 64 zeros. */
export const CHAIN_GENESIS = "0".repeat(64);

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "must be a lowercase hex sha256");

/**
 * One row of `/api/snapshots/index`: a stored snapshot, its methodology versions, content hash (sha256
 * of its bytes) and size, plus the tamper-evident record of the day: the sha256 of every dated object of
 * the day when the row was written (digest, DuckDB file, dataset day files) and its link in the hash
 * chain (chainHashOf). Rows are written once and never replaced.
 */
export const SnapshotIndexEntrySchema = z.object({
  snapshotDate: CalendarDaySchema,
  buildId: z.string(),
  methodologyVersions: z.record(z.string(), z.string()),
  contentHash: z.string(),
  byteSize: z.number().int(),
  createdAt: z.number().int().describe("Unix s: the snapshot's as-of (creation is reproducible, not wall time)"),
  digestSha256: Sha256Hex.nullable().describe("sha256 of `digests/<day>.json`; null when none was stored"),
  databaseSha256: Sha256Hex.nullable().describe(
    "sha256 of `snapshots/<day>/ballast.duckdb` (served at `/snapshots/<day>/ballast.duckdb`); null when none was stored",
  ),
  datedFiles: z
    .array(z.object({ path: z.string(), sha256: Sha256Hex }))
    .describe(
      "Dataset day files `datasets/<topic>/<day>.<fmt>` stored when the row was written, by path, with their sha256",
    ),
  chainIndex: z
    .number()
    .int()
    .nonnegative()
    .describe("Position in the chain: rows in the order they were published, from 0"),
  previousChainHash: Sha256Hex.describe("chainHash of the row with chainIndex − 1 (64 zeros for the first row)"),
  chainHash: Sha256Hex.describe(
    "sha256 of previousChainHash, a newline and the row's canonical fields (docs/methodology/dated-snapshots.md)",
  ),
});
export type SnapshotIndexEntry = z.infer<typeof SnapshotIndexEntrySchema>;

/**
 * The chain hash of an index row: sha256 (hex) of `previousChainHash + "\n" + JSON.stringify([chainIndex,
 * snapshotDate, buildId, contentHash, byteSize, createdAt, [[analytic, versionId] by analytic],
 * digestSha256, databaseSha256, [[path, sha256] by path]])`. Anyone holding one row's chainHash can
 * recompute the chain from the published index up to it and detect any rewritten earlier row or file.
 */
export function chainHashOf(row: Omit<SnapshotIndexEntry, "chainHash">): string {
  const canonical = JSON.stringify([
    row.chainIndex,
    row.snapshotDate,
    row.buildId,
    row.contentHash,
    row.byteSize,
    row.createdAt,
    Object.entries(row.methodologyVersions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    row.digestSha256,
    row.databaseSha256,
    [...row.datedFiles].sort((a, b) => (a.path < b.path ? -1 : 1)).map((f) => [f.path, f.sha256]),
  ]);
  return createHash("sha256").update(`${row.previousChainHash}\n${canonical}`).digest("hex");
}
export const SnapshotIndexSchema = z.object({ snapshots: z.array(SnapshotIndexEntrySchema) });

/** `/api/snapshots/index` page (spec 4.1): newest first, keyset `cursor` = the last date of the page. */
export const SnapshotIndexPageSchema = z.object({
  snapshots: z.array(SnapshotIndexEntrySchema),
  pagination: z.object({ limit: z.number().int(), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
});

/** `/api/snapshot/{date}/stablecoin/{id}` (spec 2.15): one coin of a dated snapshot with its scores. */
export const SnapshotProjectionSchema = z.object({
  snapshotDate: z.string(),
  stablecoinId: z.string(),
  generatedAt: z.number().int(),
  methodologyVersions: z.record(z.string(), z.string()),
  stablecoin: SnapshotStablecoinSchema,
  scores: z.object({
    reportCard: ReportCardSchema.nullable(),
    psi: PsiCurrentSchema.nullable(),
    dews: DewsCoinSchema.nullable(),
    liquidity: DexLiquidityRowSchema.nullable(),
  }),
});
