import { z } from "zod";
import { methodology, MethodologySchema } from "../../site-data/peg-summary.ts";
import {
  BURN_TYPES,
  EXCLUDED_FLOW_TYPES,
  type ExcludedFlowType,
  FLOW_SCOPES,
  type FlowHour,
  FlowHourSchema,
  MINT_BURN_METHODOLOGY,
  MINT_BURN_METHODOLOGY_LABEL,
  type MintBurnEvent,
  MintBurnEventSchema,
  type MintBurnHourly,
  type MintBurnLedger,
} from "../../site-data/mint-burn.ts";
import { HttpError } from "../lib/http-error.ts";
import { eventPageBody, eventPageSchema } from "./event-page.ts";
import { keysetPage } from "../lib/keyset.ts";
import { boolParam, intParam, stablecoinParam } from "../lib/query-params.ts";

/** `/api/mint-burn-events` body. */
export const MintBurnEventsResponseSchema = eventPageSchema(MintBurnEventSchema);

const Bound = z.object({ kind: z.enum(["lower", "upper"]), valueUsd: z.number() }).nullable();
const Completeness = z.enum(["complete", "partial", "unpriced", "inactive"]);
/** `/api/mint-burn-flows` body (spec 2.17): USD fields null when unpriced, never zero; `_meta` added by the route. */
export const MintBurnFlowsResponseSchema = z.object({
  windowHours: z.number().int(),
  windowEnd: z.number().int(),
  coins: z.array(
    z.object({
      stablecoinId: z.string(),
      symbol: z.string(),
      windowHours: z.number().int(),
      mintedUsd: z.number().nullable(),
      burnedUsd: z.number().nullable(),
      netFlowUsd: z.number().nullable(),
      netFlowUsdBound: Bound,
      mintedNative: z.number(),
      burnedNative: z.number(),
      netFlowNative: z.number(),
      mintCount: z.number().int(),
      burnCount: z.number().int(),
      netFlowDirection: z.enum(["minting", "burning", "flat", "inactive"]),
      completeness: Completeness,
      mintCompleteness: Completeness,
      burnCompleteness: Completeness,
      unpricedMintEventCount: z.number().int(),
      unpricedBurnEventCount: z.number().int(),
      excludedEventCounts: FlowHourSchema.shape.excludedEventCounts.describe(
        "Events of the window (`hours`) per excluded flow type: counted, not summed",
      ),
      valuation: z.object({
        window24h: z.object({
          mintedUsd: z.number().nullable(),
          burnedUsd: z.number().nullable(),
          netFlowUsd: z.number().nullable(),
        }),
        baseline: z.object({
          days: z.number().int(),
          activeDays: z.number().int(),
          meanDailyNetUsd: z.number().nullable(),
        }),
        netFlow7d: z.number().nullable(),
        netFlow30d: z.number().nullable(),
        netFlow90d: z.number().nullable(),
        netFlow7dBound: Bound,
        netFlow30dBound: Bound,
        netFlow90dBound: Bound,
      }),
    }),
  ),
  aggregate: z.object({
    mintedUsd: z.number().nullable(),
    burnedUsd: z.number().nullable(),
    netFlowUsd: z.number().nullable(),
    coinsWithCompleteValuation: z.number().int(),
    coinsWithActivity: z.number().int(),
  }),
  methodology: MethodologySchema,
});

const coinId = z.string().max(200, "must be at most 200 characters");

/** Query parameters of `/api/mint-burn-events`. */
export const MintBurnEventsQuery = z.object({
  stablecoin: stablecoinParam().describe("Canonical stablecoin id (required); unknown ids are 404"),
  direction: z.enum(["mint", "burn"], { error: "must be mint or burn" }).optional().describe("mint or burn"),
  chain: z
    .string()
    .regex(/^[a-z0-9-]+$/, "must be a registry chain id")
    .max(100, "must be at most 100 characters")
    .optional()
    .describe("Registry chain id"),
  burnType: z
    .enum(BURN_TYPES, { error: `must be one of ${BURN_TYPES.join(", ")}` })
    .optional()
    .describe(`Burn type: ${BURN_TYPES.join(", ")} (mints have none)`),
  scope: z
    .enum([...FLOW_SCOPES, "all"], { error: `must be one of ${[...FLOW_SCOPES, "all"].join(", ")}` })
    .default("all")
    .describe(
      "`issuance` (standard flows), `bridge`, `roundtrip`, `enforcement` (frozen-fund burns) or `all` (default)",
    ),
  minAmount: z
    .string()
    .regex(/^\d{1,15}(\.\d{1,18})?$/, "must be a non-negative number")
    .transform(Number)
    .optional()
    .describe("Minimum amount in token units"),
  limit: intParam(1, 1000).default(100).describe("1-1000, default 100"),
  offset: intParam(0, 25000).optional().describe("0-25000; cannot combine with cursor"),
  cursor: z
    .string()
    .max(600, "not a cursor returned by this endpoint")
    .optional()
    .describe("Opaque keyset cursor from `nextCursor`"),
  includeTotal: boolParam(false).describe("true adds the exact `total`"),
});

/**
 * Pages one coin's mint/burn events newest first (`timestamp` desc, `id` desc) with keyset cursors;
 * `ascending` is the ledger's events in ascending (timestamp, id) order (memoised per build by the route).
 * Throws HttpError 404 for an unknown stablecoin id, 400 on offset with cursor or a bad cursor.
 */
export function queryMintBurnEvents(
  ledger: MintBurnLedger,
  ascending: MintBurnEvent[],
  asOf: number,
  q: z.output<typeof MintBurnEventsQuery>,
) {
  if (!ledger.stablecoinIds.includes(q.stablecoin)) throw new HttpError(404, `Unknown stablecoin id: ${q.stablecoin}`);
  const keep = (e: MintBurnEvent) =>
    e.stablecoinId === q.stablecoin &&
    (q.direction === undefined || e.direction === q.direction) &&
    (q.chain === undefined || e.chainId === q.chain) &&
    (q.burnType === undefined || e.burnType === q.burnType) &&
    (q.scope === "all" || e.scope === q.scope) &&
    (q.minAmount === undefined || (e.amountNative !== null && e.amountNative >= q.minAmount));
  const page = keysetPage(ascending, (e) => [e.timestamp, e.id], {
    sortName: "date",
    arity: 2,
    direction: "desc",
    keep,
    limit: q.limit,
    offset: q.offset,
    cursor: q.cursor,
    includeTotal: q.includeTotal,
  });
  return eventPageBody(page, q, methodology(MINT_BURN_METHODOLOGY, MINT_BURN_METHODOLOGY_LABEL, asOf));
}

/** Query parameters of `/api/mint-burn-flows`. */
export const MintBurnFlowsQuery = z.object({
  stablecoin: coinId
    .optional()
    .describe("Canonical stablecoin id; absent: every coin with tracked supply contracts and the aggregate"),
  hours: intParam(1, 8760).default(24).describe("Window in hours ending at the build's as-of, 1-8760 (default 24)"),
});

/**
 * Sums of one window of standard flows (USD over priced events, token units over all, counts) and the
 * window's excluded events per flow type.
 */
interface WindowSums {
  mintedUsd: number;
  burnedUsd: number;
  mintedNative: number;
  burnedNative: number;
  mintCount: number;
  burnCount: number;
  unpricedMint: number;
  unpricedBurn: number;
  excluded: Record<ExcludedFlowType, number>;
}

/** Sums the hours starting in [from, to) (Unix s). */
function sumWindow(hourly: FlowHour[], from: number, to: number): WindowSums {
  const excluded = Object.fromEntries(EXCLUDED_FLOW_TYPES.map((t) => [t, 0])) as Record<ExcludedFlowType, number>;
  const s: WindowSums = {
    mintedUsd: 0,
    burnedUsd: 0,
    mintedNative: 0,
    burnedNative: 0,
    mintCount: 0,
    burnCount: 0,
    unpricedMint: 0,
    unpricedBurn: 0,
    excluded,
  };
  for (const h of hourly) {
    if (h.hourTs < from || h.hourTs >= to) continue;
    s.mintedUsd += h.mintedUsd ?? 0;
    s.burnedUsd += h.burnedUsd ?? 0;
    s.mintedNative += h.mintedNative;
    s.burnedNative += h.burnedNative;
    s.mintCount += h.mintCount;
    s.burnCount += h.burnCount;
    s.unpricedMint += h.unpricedMintCount;
    s.unpricedBurn += h.unpricedBurnCount;
    for (const t of EXCLUDED_FLOW_TYPES) excluded[t] += h.excludedEventCounts[t];
  }
  return s;
}

/** Completeness of a side's USD sum: `complete` (all priced), `partial`, `unpriced` (none priced), `inactive` (no events). */
const completeness = (count: number, unpriced: number) =>
  count === 0 ? "inactive" : unpriced === 0 ? "complete" : unpriced === count ? "unpriced" : "partial";

/**
 * Net flow USD of a window, or null when no event of it is priced. With unpriced mints only, the
 * priced net is a lower bound of the true net; with unpriced burns only, an upper bound; both: no bound.
 */
function netFlow(s: WindowSums): {
  valueUsd: number | null;
  bound: { kind: "lower" | "upper"; valueUsd: number } | null;
} {
  const priced = s.mintCount + s.burnCount - s.unpricedMint - s.unpricedBurn;
  if (priced === 0) return { valueUsd: null, bound: null };
  const net = s.mintedUsd - s.burnedUsd;
  if (s.unpricedMint === 0 && s.unpricedBurn === 0) return { valueUsd: net, bound: null };
  if (s.unpricedBurn === 0) return { valueUsd: null, bound: { kind: "lower", valueUsd: net } };
  if (s.unpricedMint === 0) return { valueUsd: null, bound: { kind: "upper", valueUsd: net } };
  return { valueUsd: null, bound: null };
}

const direction = (s: WindowSums) =>
  s.mintCount + s.burnCount === 0
    ? "inactive"
    : s.mintedNative > s.burnedNative
      ? "minting"
      : s.mintedNative < s.burnedNative
        ? "burning"
        : "flat";
const H = 3600;
const D = 86400;
/** End (exclusive, Unix s) of every flow window: the end of the hour holding as-of (as-of itself when on the hour). */
const windowEnd = (asOf: number) => Math.ceil(asOf / H) * H;

/** One coin's flow report over `hours` ending at `asOf` (Unix s), with the 24 h / 7 / 30 / 90 d valuation block and a 30-day baseline. */
function coinFlows(c: MintBurnHourly["coins"][number], asOf: number, hours: number) {
  const end = windowEnd(asOf);
  const w = sumWindow(c.hourly, end - hours * H, end);
  const n = netFlow(w);
  const win = (days: number) => netFlow(sumWindow(c.hourly, end - days * D, end));
  const day = sumWindow(c.hourly, end - D, end);
  const n7 = win(7),
    n30 = win(30),
    n90 = win(90);
  const baselineDays = Array.from({ length: 30 }, (_, i) => sumWindow(c.hourly, end - (i + 2) * D, end - (i + 1) * D));
  const activeDays = baselineDays.filter((d) => d.mintCount + d.burnCount > 0);
  const baselineNets = activeDays.map((d) => netFlow(d).valueUsd).filter((v): v is number => v !== null);
  return {
    stablecoinId: c.stablecoinId,
    symbol: c.symbol,
    windowHours: hours,
    mintedUsd: w.mintCount - w.unpricedMint > 0 ? w.mintedUsd : null,
    burnedUsd: w.burnCount - w.unpricedBurn > 0 ? w.burnedUsd : null,
    netFlowUsd: n.valueUsd,
    netFlowUsdBound: n.bound,
    mintedNative: w.mintedNative,
    burnedNative: w.burnedNative,
    netFlowNative: w.mintedNative - w.burnedNative,
    mintCount: w.mintCount,
    burnCount: w.burnCount,
    netFlowDirection: direction(w),
    completeness: completeness(w.mintCount + w.burnCount, w.unpricedMint + w.unpricedBurn),
    mintCompleteness: completeness(w.mintCount, w.unpricedMint),
    burnCompleteness: completeness(w.burnCount, w.unpricedBurn),
    unpricedMintEventCount: w.unpricedMint,
    unpricedBurnEventCount: w.unpricedBurn,
    excludedEventCounts: w.excluded,
    valuation: {
      window24h: {
        mintedUsd: day.mintCount - day.unpricedMint > 0 ? day.mintedUsd : null,
        burnedUsd: day.burnCount - day.unpricedBurn > 0 ? day.burnedUsd : null,
        netFlowUsd: netFlow(day).valueUsd,
      },
      baseline: {
        days: 30,
        activeDays: activeDays.length,
        meanDailyNetUsd:
          baselineNets.length >= 7 ? baselineNets.reduce((a, b) => a + b, 0) / baselineNets.length : null,
      },
      netFlow7d: n7.valueUsd,
      netFlow30d: n30.valueUsd,
      netFlow90d: n90.valueUsd,
      netFlow7dBound: n7.bound,
      netFlow30dBound: n30.bound,
      netFlow90dBound: n90.bound,
    },
  };
}

/**
 * `/api/mint-burn-flows`: standard flows (issuance and redemption; round trips, bridge transfers and
 * frozen-fund burns excluded) of one coin or every tracked coin plus the aggregate, over `hours`
 * ending at the build's as-of. USD fields are null when no event is priced, never zero. Throws
 * HttpError 404 for a stablecoin id without tracked supply contracts.
 */
export function queryMintBurnFlows(flows: MintBurnHourly, asOf: number, q: z.output<typeof MintBurnFlowsQuery>) {
  const coins = q.stablecoin === undefined ? flows.coins : flows.coins.filter((c) => c.stablecoinId === q.stablecoin);
  if (q.stablecoin !== undefined && coins.length === 0)
    throw new HttpError(404, `Unknown stablecoin id: ${q.stablecoin} (no tracked supply contracts)`);
  const rows = coins.map((c) => coinFlows(c, asOf, q.hours));
  const priced = rows.filter((r) => r.netFlowUsd !== null);
  // A total over coins is only a number when every active coin's window is fully priced (never a partial sum).
  const complete = rows.every((r) => r.netFlowDirection === "inactive" || r.netFlowUsd !== null);
  const sum = (f: (r: (typeof rows)[number]) => number | null) =>
    complete ? rows.reduce((s, r) => s + (f(r) ?? 0), 0) : null;
  return {
    windowHours: q.hours,
    windowEnd: windowEnd(asOf),
    coins: rows,
    aggregate: {
      mintedUsd: sum((r) => r.mintedUsd),
      burnedUsd: sum((r) => r.burnedUsd),
      netFlowUsd: sum((r) => r.netFlowUsd),
      coinsWithCompleteValuation: priced.length,
      coinsWithActivity: rows.filter((r) => r.netFlowDirection !== "inactive").length,
    },
    methodology: methodology(MINT_BURN_METHODOLOGY, MINT_BURN_METHODOLOGY_LABEL, asOf),
  };
}
