import { z } from "zod";
import { daySeconds, mapObject, requiredNum, sqlArtifact } from "./contract.ts";

const PegMap = z.record(z.string(), z.number());

/** ChainCirculating (spec 2.2): USD supply on one chain now and about 1/7/30 days ago; null when unobserved. */
export const ChainCirculatingSchema = z.object({
  current: z.number().nullable(),
  circulatingPrevDay: z.number().nullable(),
  circulatingPrevWeek: z.number().nullable(),
  circulatingPrevMonth: z.number().nullable(),
});

/** One chain of a quarantined coin (spec 2.2 supplyChainGuard.chains[]); USD, times Unix s. */
export const SupplyChainGuardChainSchema = z.object({
  chainLabel: z.string().describe("Upstream chain label (chainCirculating key)"),
  chainId: z.string().optional().describe("Registry chain id; omitted when the registry does not know the chain"),
  listCurrentUsd: z
    .number()
    .nullable()
    .describe("USD: the chain's current supply in the list snapshot (withheld from chainCirculating)"),
  baselineUsd: z
    .number()
    .nullable()
    .describe("USD: the chain's supply of the list's previous-day bucket; null when unobserved"),
  baselineObservedAt: z.number().describe("Unix s of the baseline (one day before observedAt)"),
  baselineSource: z
    .enum(["state", "seed", "list-prev-day"])
    .describe("Where the baseline comes from (always `list-prev-day` here)"),
  resolution: z
    .enum(["onchain-total-supply", "defillama-chain-history", "carried-baseline", "unavailable"])
    .describe("How the chain was resolved; `unavailable`: not repaired, withheld"),
  repairedCurrentUsd: z.number().optional().describe("USD: repaired current supply; omitted when not repaired"),
  observedAt: z.number().describe("Unix s of the snapshot the chain value comes from"),
  observedAtKind: z.enum(["upstream", "local-read"]).describe("`upstream`: observedAt is the upstream snapshot's time"),
});

/**
 * supplyChainGuard (spec 2.2), `ballast-supply-chain-guard-v1`: present only on a coin whose per-chain
 * supply sums to more than its total (beyond 1% + $1): status `quarantined`, its total stays the
 * upstream figure, its chains are withheld from chainCirculating and every chain table and listed here.
 */
export const SupplyChainGuardSchema = z.object({
  reason: z.literal("supply-chain-dropout").describe("The chain breakdown disagrees with the coin's total"),
  status: z
    .enum(["repaired", "quarantined", "unavailable", "chains-unavailable"])
    .describe("`quarantined`: chains withheld, total published as the upstream reports it"),
  quarantinedSince: z.number().optional().describe("Unix s of the snapshot that was quarantined"),
  concurrentGainUsd: z
    .number()
    .optional()
    .describe("USD gained on healthy chains meanwhile; omitted (not measured by this rule)"),
  chains: z.array(SupplyChainGuardChainSchema).describe("The withheld chains with their snapshot values"),
});

/** StablecoinData (spec 2.2). All `circulating*` values are USD keyed by pegType. */
export const StablecoinDataSchema = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  geckoId: z.string().nullable(),
  pegType: z.string(),
  pegMechanism: z.string(),
  priceSource: z.string(),
  priceConfidence: z.enum(["high", "single-source", "low", "fallback"]).nullable(),
  price: z.number().nullable(),
  priceUpdatedAt: z.number().nullable(),
  priceObservedAt: z.number().nullable(),
  priceObservedAtMode: z.enum(["upstream", "local_fetch", "unknown"]).nullable(),
  priceSyncedAt: z.number().nullable(),
  supplySource: z.string().optional(),
  circulating: PegMap,
  circulatingPrevDay: PegMap,
  circulatingPrevWeek: PegMap,
  circulatingPrevMonth: PegMap,
  chainCirculating: z.record(z.string(), ChainCirculatingSchema),
  chains: z.array(z.string()),
  contracts: z.array(z.object({ chain: z.string(), address: z.string(), decimals: z.number() })).optional(),
  /** Sources that returned a valid current quote (last 24 h before as-of); [] when none. */
  consensusSources: z.array(z.string()),
  /** Sources of the selected consensus cluster (compatibility alias of the agreeing set). */
  agreeSources: z.array(z.string()).optional(),
  /**
   * Optional provenance extra (like `supplyGapFill`): present, and `true`, only on a coin the upstream
   * list carries but the curated registry does not know yet; its id is provisional
   * (`<symbol>-unreviewed-<llamaId>`) and changes once the coin is reviewed.
   */
  unreviewed: z.literal(true).optional(),
  /** Optional provenance extra: present only when the supply-chain guard quarantined the coin. */
  supplyChainGuard: SupplyChainGuardSchema.optional(),
  priceUnavailableReason: z
    .enum(["no-observation", "stale-beyond-window"])
    .optional()
    .describe(
      "Present exactly when price is null: `no-observation` (no accepted quote up to as-of) or `stale-beyond-window` (the newest accepted quote is older than its source's staleness window)",
    ),
  supplyUnavailableReason: z
    .enum(["no-observation", "stale-beyond-window", "valuation-unavailable"])
    .optional()
    .describe(
      "Present exactly when `circulating` is empty (current supply null): `no-observation` (no accepted supply point up to as-of), `stale-beyond-window` (the newest accepted point is older than its source's freshness window: 2 days for a DefiLlama list, 3 days for a daily point) or `valuation-unavailable` (units known, no USD value for them)",
    ),
});
export type StablecoinData = z.infer<typeof StablecoinDataSchema>;

/** Body of `/api/stablecoins` as stored (the API adds `_meta`). */
export const StablecoinsPayloadSchema = z.object({
  peggedAssets: z.array(StablecoinDataSchema),
  /**
   * pegType → USD per unit of the peg used to value supply where no ECB rate of the day (or of the 4
   * days before) exists and an older ECB rate (at most 365 days) filled in (valuation basis `fx-stale`).
   */
  fxFallbackRates: z.record(z.string(), z.number()).optional(),
  fxFallbackRateAgeDays: z
    .record(z.string(), z.number().int())
    .optional()
    .describe(
      "pegType → age in days of the ECB rate in fxFallbackRates at the supply's day (how stale the fallback rate is)",
    ),
});

type MapEntries<V> = { key: string; value: V }[];

/**
 * A row of stablecoins.sql: StablecoinData with its maps as MAP entries, optional keys null when left out,
 * `contracts` and the guard's chains as JSON text; the valuation of the supply and its mode and day.
 */
type StablecoinRow = Omit<
  StablecoinData,
  | "circulating"
  | "circulatingPrevDay"
  | "circulatingPrevWeek"
  | "circulatingPrevMonth"
  | "chainCirculating"
  | "contracts"
  | "supplyChainGuard"
> & {
  circulating: MapEntries<number>;
  circulatingPrevDay: MapEntries<number>;
  circulatingPrevWeek: MapEntries<number>;
  circulatingPrevMonth: MapEntries<number>;
  chainCirculating: MapEntries<z.infer<typeof ChainCirculatingSchema>>;
  contracts: string;
  supplyChainGuard: { status: "quarantined"; quarantinedSince: number; chains: string } | null;
  valuation_basis: string | null;
  usd_per_native: number | null;
  fx_rate_age_days: number | null;
  supply_mode: string | null;
  supply_date: string | null;
};

/** Keys of StablecoinData present only with a value (null in the row: left out). */
const OPTIONAL_KEYS = [
  "supplySource",
  "contracts",
  "unreviewed",
  "supplyChainGuard",
  "priceUnavailableReason",
  "supplyUnavailableReason",
] as const;

/** One coin of the list from its row (keys in the row's order, optional ones left out when null or, for contracts, empty). */
function stablecoinOf(row: StablecoinRow): StablecoinData {
  const { valuation_basis, usd_per_native, fx_rate_age_days, supply_mode, supply_date, ...r } = row;
  const contracts = JSON.parse(r.contracts) as NonNullable<StablecoinData["contracts"]>;
  const coin: Record<string, unknown> = {
    ...r,
    circulating: mapObject(r.circulating),
    circulatingPrevDay: mapObject(r.circulatingPrevDay),
    circulatingPrevWeek: mapObject(r.circulatingPrevWeek),
    circulatingPrevMonth: mapObject(r.circulatingPrevMonth),
    chainCirculating: mapObject(r.chainCirculating),
    contracts: contracts.length ? contracts : null,
    supplyChainGuard: r.supplyChainGuard && supplyChainGuardOf(r.supplyChainGuard),
  };
  for (const k of OPTIONAL_KEYS) if (coin[k] === null) delete coin[k];
  return coin as StablecoinData;
}

/**
 * pegType → the USD rate valuing supply where only a stale ECB rate existed (basis `fx-stale`; the last coin
 * of the list of that peg type wins), and the age of that rate (days; the last coin with one), each by pegType.
 */
function fxFallbacks(rows: StablecoinRow[]) {
  const rates: Record<string, number> = {};
  const ageDays: Record<string, number> = {};
  for (const r of rows) {
    if (r.valuation_basis !== "fx-stale" || r.usd_per_native === null) continue;
    rates[r.pegType] = r.usd_per_native;
    if (r.fx_rate_age_days !== null) ageDays[r.pegType] = r.fx_rate_age_days;
  }
  const sorted = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).sort());
  return { fxFallbackRates: sorted(rates), fxFallbackRateAgeDays: sorted(ageDays) };
}

/**
 * `site-data/stablecoins.json` — the current list of every coin DefiLlama lists (source: DefiLlama
 * `/stablecoins`); without a list capture within its freshness window (2 days) of as-of, every coin with a
 * supply-history point within its source's freshness window. A coin whose current supply is null carries
 * `supplyUnavailableReason`. Supply (USD) = native units x the supply valuation rule of the point's day
 * (int_supply_valuation_daily); `supplySource` names where the units came from.
 */
export const stablecoinsArtifact = sqlArtifact(import.meta.url, {
  key: "stablecoins",
  schemaVersion: "1.2.0",
  maxAgeSec: 600,
  description: "Every listed stablecoin: supply (USD) now and 1/7/30 days ago, per-chain breakdown, price.",
  path: "site-data/stablecoins.json",
  schema: StablecoinsPayloadSchema,
  sql: "stablecoins",
  shape: "many",
  // objects keyed by pegType and chain, keys present only with a value, the fallback FX rates over the list
  transform: (rows: StablecoinRow[]) => ({ peggedAssets: rows.map(stablecoinOf), ...fxFallbacks(rows) }),
  dataAsOf: (_payload, ctx, rows: StablecoinRow[]) => supplyDataAsOf(rows, ctx.sourceObservedAt),
});

/**
 * Data time (Unix s) of the current supply figures: the list capture's observation when the list is
 * current (`supply_mode` 'list'), else the newest current supply point (newestSupplyDay): a list older
 * than its freshness window is not the data's time.
 */
export function supplyDataAsOf(
  rows: Record<string, unknown>[],
  sourceObservedAt: Record<string, number | null>,
): number | null {
  const listed = rows.some((r) => r.supply_mode === "list");
  return (listed ? sourceObservedAt["defillama.stablecoins"] : null) ?? newestSupplyDay(rows);
}

/** The supplyChainGuard object of a coin quarantined by supply_chain_guard (its chains as JSON text). */
function supplyChainGuardOf(g: NonNullable<StablecoinRow["supplyChainGuard"]>): z.infer<typeof SupplyChainGuardSchema> {
  const chains = (JSON.parse(g.chains) as Record<string, unknown>[]).map((c) => {
    const { chainId, ...rest } = c;
    return SupplyChainGuardChainSchema.parse({ ...rest, ...(chainId ? { chainId } : {}) });
  });
  return {
    reason: "supply-chain-dropout",
    status: g.status,
    quarantinedSince: requiredNum(g.quarantinedSince, "supply_chain_guard_since of a quarantined coin"),
    chains,
  };
}

/** Unix s of the newest current supply point (the as-of fallback's data time), null when none. */
export function newestSupplyDay(rows: Record<string, unknown>[]): number | null {
  const days = rows
    .map((r) => r.supply_date)
    .filter((d): d is string => typeof d === "string")
    .sort();
  return days.length ? daySeconds(days[days.length - 1]) : null;
}
