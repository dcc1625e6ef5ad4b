import { z } from "zod";
import { type Artifact, type ArtifactFile, daySeconds, num, requiredNum, sqlFile } from "./contract.ts";

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

const bucket = (pegType: string, v: unknown) => {
  const n = num(v);
  return n === null ? {} : { [pegType]: n };
};

/**
 * `site-data/stablecoins.json` — the current list of every coin DefiLlama lists (source: DefiLlama
 * `/stablecoins`); without a list capture within its freshness window (2 days) of as-of, every coin with a
 * supply-history point within its source's freshness window. A coin whose current supply is null carries
 * `supplyUnavailableReason`. Supply (USD) = native units x the supply valuation rule of the point's day
 * (int_supply_valuation_daily); `supplySource` names where the units came from.
 */
export const stablecoinsArtifact: Artifact = {
  key: "stablecoins",
  schemaVersion: "1.2.0",
  maxAgeSec: 600,
  schema: StablecoinsPayloadSchema,
  outputs: { main: { path: "site-data/stablecoins.json", schema: StablecoinsPayloadSchema } },
  description: "Every listed stablecoin: supply (USD) now and 1/7/30 days ago, per-chain breakdown, price.",
  queries: { coins: sqlFile(import.meta.url, "stablecoins"), chains: sqlFile(import.meta.url, "stablecoin_chains") },
  assemble(rows, ctx) {
    const chainsByCoin = new Map<string, Record<string, unknown>[]>();
    for (const r of rows.chains) {
      const list = chainsByCoin.get(String(r.stablecoin_id)) ?? [];
      list.push(r);
      chainsByCoin.set(String(r.stablecoin_id), list);
    }
    const fxFallbackRates: Record<string, number> = {};
    const fxFallbackRateAgeDays: Record<string, number> = {};
    const peggedAssets: StablecoinData[] = rows.coins.map((r) => {
      const pegType = String(r.peg_type);
      const usdPerNative = num(r.usd_per_native);
      if (r.valuation_basis === "fx-stale" && usdPerNative !== null) {
        fxFallbackRates[pegType] = usdPerNative;
        const ageDays = num(r.fx_rate_age_days);
        if (ageDays !== null) fxFallbackRateAgeDays[pegType] = ageDays;
      }
      const price = num(r.price);
      const contracts = JSON.parse(String(r.contracts_json ?? "[]"));
      const chainCirculating: StablecoinData["chainCirculating"] = {};
      for (const c of chainsByCoin.get(String(r.stablecoin_id)) ?? []) {
        chainCirculating[String(c.chain_name)] = {
          current: num(c.circulating_usd),
          circulatingPrevDay: num(c.prev_day_usd),
          circulatingPrevWeek: num(c.prev_week_usd),
          circulatingPrevMonth: num(c.prev_month_usd),
        };
      }
      return {
        id: String(r.stablecoin_id),
        name: String(r.name),
        symbol: String(r.symbol),
        geckoId: (r.gecko_id as string | null) ?? null,
        pegType,
        pegMechanism: String(r.peg_mechanism),
        priceSource: price === null ? "missing" : String(r.price_source),
        priceConfidence: price === null ? null : (r.price_confidence as StablecoinData["priceConfidence"]),
        price,
        priceUpdatedAt: price === null ? null : num(r.price_observed_at),
        priceObservedAt: price === null ? null : num(r.price_observed_at),
        priceObservedAtMode:
          price === null ? null : (r.price_observed_at_mode as StablecoinData["priceObservedAtMode"]),
        priceSyncedAt: price === null ? null : num(r.price_synced_at),
        ...(r.supply_source ? { supplySource: String(r.supply_source) } : {}),
        circulating: bucket(pegType, r.circulating_usd),
        circulatingPrevDay: bucket(pegType, r.prev_day_usd),
        circulatingPrevWeek: bucket(pegType, r.prev_week_usd),
        circulatingPrevMonth: bucket(pegType, r.prev_month_usd),
        chainCirculating,
        chains: JSON.parse(String(r.chains_json ?? "[]")),
        ...(contracts.length ? { contracts } : {}),
        consensusSources: JSON.parse(String(r.consensus_sources_json)),
        agreeSources: JSON.parse(String(r.agree_sources_json)),
        ...(r.unreviewed === true ? { unreviewed: true as const } : {}),
        ...(r.supply_chain_guard_status ? { supplyChainGuard: supplyChainGuardOf(r) } : {}),
        ...(price === null
          ? {
              priceUnavailableReason: r.price_unavailable_reason as NonNullable<
                StablecoinData["priceUnavailableReason"]
              >,
            }
          : {}),
        ...(num(r.circulating_usd) === null
          ? {
              supplyUnavailableReason: (r.supply_unavailable_reason ?? "no-observation") as NonNullable<
                StablecoinData["supplyUnavailableReason"]
              >,
            }
          : {}),
      };
    });
    const sorted = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).sort());
    const payload = {
      peggedAssets,
      fxFallbackRates: sorted(fxFallbackRates),
      fxFallbackRateAgeDays: sorted(fxFallbackRateAgeDays),
    };
    const file: ArtifactFile = { path: stablecoinsArtifact.outputs.main.path, payload, rows: peggedAssets.length };
    return { files: [file], dataAsOf: supplyDataAsOf(rows.coins, ctx.sourceObservedAt) };
  },
};

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

/** The supplyChainGuard object of a `stablecoins` mart row quarantined by supply_chain_guard. */
function supplyChainGuardOf(r: Record<string, unknown>): z.infer<typeof SupplyChainGuardSchema> {
  const chains = (JSON.parse(String(r.supply_chain_guard_chains_json)) as Record<string, unknown>[]).map((c) => {
    const { chainId, ...rest } = c;
    return SupplyChainGuardChainSchema.parse({ ...rest, ...(chainId ? { chainId } : {}) });
  });
  return {
    reason: "supply-chain-dropout",
    status: r.supply_chain_guard_status as "quarantined",
    quarantinedSince: requiredNum(r.supply_chain_guard_since, "supply_chain_guard_since of a quarantined coin"),
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
