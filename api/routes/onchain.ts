import type { z } from "zod";
import { type BlacklistLedger, blacklistLedgerArtifact, blacklistSummaryArtifact } from "../../site-data/blacklist.ts";
import {
  type MintBurnEvent,
  mintBurnFlowsArtifact,
  type MintBurnHourly,
  type MintBurnLedger,
  mintBurnLedgerArtifact,
} from "../../site-data/mint-burn.ts";
import { BLACKLIST_PAGES } from "../../site-data/blacklist-pages.ts";
import { blacklistPagesBytes, hasPages } from "../queries/blacklist-pages.ts";
import { BlacklistQuery, BlacklistResponseSchema, blacklistPageBytes, queryBlacklist } from "../queries/blacklist.ts";
import {
  MintBurnEventsQuery,
  MintBurnEventsResponseSchema,
  MintBurnFlowsQuery,
  MintBurnFlowsResponseSchema,
  queryMintBurnEvents,
  queryMintBurnFlows,
} from "../queries/mint-burn.ts";
import { bind, ledgerPage, need, type RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag("onchain", "Issuer freeze/blacklist events and mint/burn flows decoded from on-chain logs.");

/** On-chain freezes and supply flows: the freeze ledger and its summary, mint/burn events and flows. */
export const ONCHAIN_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "listBlacklistEvents",
    method: "GET",
    path: "/api/blacklist",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    meta: false,
    artifact: bind(blacklistLedgerArtifact),
    query: BlacklistQuery,
    response: BlacklistResponseSchema,
    summary: "Freeze/blacklist events",
    description:
      "BlacklistEvent rows (spec 2.5) of tracked freeze contracts: decoded `blacklist`, `unblacklist` and `destroy` logs with exact amounts (`amountRaw` base units; `amountNative` token units; null when the event carries none and no balance read resolved it, never zero) and USD (`amountUsdAtEvent`) by the supply valuation rule of the event's UTC day (USD pegs 1 × units; null without a valuation). Each destroy links to the freeze that made it possible (`linkedFreezeEventId`, `frozenDurationSec`). Sorted by `sortBy` (`date`, `stablecoin`, `chain` display name, `event`; ties by time then id) in `sortDirection`; page with the opaque keyset `nextCursor` (valid for every sort: used with another sort or direction it continues after the same event in that order) or `offset`. `stablecoin` is the uppercase tracker symbol; `chain` the exact display name and `chainId` the registry id (both given: the same chain, else 400; an unknown chain matches nothing).",
    handler: async (ctx, route) => {
      const build = need(ctx.build);
      const query = ctx.query as z.output<typeof BlacklistQuery>;
      // Builds published before the serving layout page from the JSON ledger (parsed onto the heap).
      if (!hasPages(build))
        return ledgerPage<BlacklistLedger>(route, ctx, async (l) => ({
          bytes: await blacklistPageBytes(build, await queryBlacklist(build, l, build.manifest.asOf, query)),
        }));
      return {
        bytes: await blacklistPagesBytes(build, build.manifest.asOf, query),
        dataAsOf: build.dataAsOf(BLACKLIST_PAGES.index),
      };
    },
  },
  {
    kind: "json",
    operationId: "getBlacklistSummary",
    method: "GET",
    path: "/api/blacklist-summary",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    meta: false,
    artifact: bind(blacklistSummaryArtifact),
    summary: "Freeze/blacklist summary",
    description:
      "Spec 2.5 summary. Units: every spec `*Total` (`destroyedTotal`, `activeFrozenTotal`, `trackedFrozenTotal`, per-coin `perCoinFrozenTotal`, `perCoinDestroyedTotal`) is USD, each event valued at its UTC day by the supply valuation rule (USD pegs 1 × units); token-unit companions end in `Native` (numbers) or `Exact` (exact decimal strings). A total with an unknown term (an amount not yet read, or no valuation) is null, never zero or a partial sum, and the unknown terms are counted beside it (`destroyedAmountGapCount`, `activeAmountGapCount`, `trackedAmountGapCount`, `perCoinFrozenAmountGapCount`, `perCoinDestroyedAmountGapCount`). `stats`: currently frozen addresses per coin (replay: a blacklist opens a record with its balance at the freeze, a destroy marks it destroyed, an unblacklist closes it); no current-balance snapshots are read yet, so `trackedFrozenTotal` is null and `trackedAmountGapCount` counts every active record. Quarterly event types zero-filled; `frozenThenDestroyed`: destroys linked to their freeze, exact token amounts per coin and the median time frozen. `dataQuality.status` applies the amount-gap thresholds of spec 2.8 (degraded at 1% or 5 recent gaps, stale at 2% or 25). `reconciliation` is this build's check of the ledger (unique ids, destroyed base-unit sums).",
  },
  {
    kind: "json",
    operationId: "listMintBurnEvents",
    method: "GET",
    path: "/api/mint-burn-events",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    meta: false,
    artifact: bind(mintBurnLedgerArtifact),
    query: MintBurnEventsQuery,
    response: MintBurnEventsResponseSchema,
    summary: "Mint/burn events of one stablecoin",
    description:
      "Mints and burns of tracked supply contracts (zero-address `Transfer`, Tether `Issue`/`Redeem`, Paxos `SupplyIncreased`/`SupplyDecreased`), newest first, classified by `flowType`: `standard`, `bridge_transfer` (to/from a known bridge), `atomic_roundtrip` (mint and burn in one transaction within 0.5%), `fast_roundtrip` (a burn from the mint's recipient within 24 h and 0.5%, e.g. PYUSD's erroneous 300-trillion mint of 2025-10-15) and `frozen_funds` (a burn in the transaction of a destroy). `scope` groups them (`issuance` = standard). `stablecoin` is the canonical id (404 when unknown); `minAmount` is in token units.",
    handler: (ctx, route) =>
      ledgerPage<MintBurnLedger>(route, ctx, async (l) =>
        queryMintBurnEvents(
          l,
          await need(ctx.build).memo<MintBurnEvent[]>("mint-burn-ascending", () => [...l.events].reverse()),
          need(ctx.build).manifest.asOf,
          ctx.query as z.output<typeof MintBurnEventsQuery>,
        ),
      ),
  },
  {
    kind: "json",
    operationId: "getMintBurnFlows",
    method: "GET",
    path: "/api/mint-burn-flows",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: true,
    artifact: bind(mintBurnFlowsArtifact),
    query: MintBurnFlowsQuery,
    response: MintBurnFlowsResponseSchema,
    summary: "Mint/burn flows, per coin and aggregate",
    description:
      "Standard flows only (round trips, bridge transfers and frozen-fund burns are excluded; `excludedEventCounts` counts those of the same window per flow type) over `hours` ending at the end of the hour holding the build's as-of (`windowEnd`). `aggregate` USD totals are null unless every active coin's window is fully priced. USD sums cover priced events (token units × the supply valuation rule of the event's UTC day: USD pegs 1 × units; unavailable → unpriced, never zero); `netFlowUsd` is null unless every event of the window is priced, with `netFlowUsdBound` a lower (only mints unpriced) or upper (only burns unpriced) bound; completeness labels `complete`, `partial`, `unpriced`, `inactive`. Token-unit flows (`*Native`) are always exact sums. `valuation`: 24 h, 7/30/90-day nets (and bounds) of those windows and a 30-day baseline (mean of active days' nets, null below 7 days).",
    handler: (ctx, route) =>
      ledgerPage<MintBurnHourly>(route, ctx, (l) =>
        queryMintBurnFlows(l, need(ctx.build).manifest.asOf, ctx.query as z.output<typeof MintBurnFlowsQuery>),
      ),
  },
];
