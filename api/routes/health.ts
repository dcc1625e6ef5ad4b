import { BlacklistSummarySchema, blacklistSummaryArtifact } from "../../site-data/blacklist.ts";
import { MintBurnHourlySchema, mintBurnFlowsArtifact, MintBurnLedgerSchema, mintBurnLedgerArtifact } from "../../site-data/mint-burn.ts";
import { buildHealth, type OnchainHealthInputs } from "../health.ts";
import type { ServingBuild } from "../lib/published.ts";
import type { RouteDecl } from "./route.ts";

/**
 * What health reports of the on-chain artifacts of `build` (memoised per build): the freeze
 * summary's amount gaps, and the mint/burn ledger's newest event per coin and newest hour. A
 * section whose artifact is missing or unreadable is null.
 */
function onchainInputs(build: ServingBuild | null): Promise<OnchainHealthInputs | undefined> {
  if (!build) return Promise.resolve(undefined);
  return build.memo("health-onchain", async () => {
    const summary = await build.payload(blacklistSummaryArtifact.outputs.main.path, (x) => BlacklistSummarySchema.parse(x)).catch(() => undefined);
    const ledger = await build.payload(mintBurnLedgerArtifact.outputs.main.path, (x) => MintBurnLedgerSchema.parse(x)).catch(() => undefined);
    const flows = await build.payload(mintBurnFlowsArtifact.outputs.main.path, (x) => MintBurnHourlySchema.parse(x)).catch(() => undefined);
    const latestEventTsBySymbol: Record<string, number> = {};
    for (const e of ledger?.events ?? []) latestEventTsBySymbol[e.stablecoin] = Math.max(latestEventTsBySymbol[e.stablecoin] ?? 0, e.timestamp);
    const hours = (flows?.coins ?? []).flatMap((c) => c.hourly.map((h) => h.hourTs));
    return {
      blacklist: summary ? (({ missing, recentMissing, recentWindowSec, missingRatio }) => ({
        totalEvents: summary.totalEvents, missingAmounts: missing, recentMissingAmounts: recentMissing, recentWindowSec, missingRatio,
      }))(summary.dataQuality.amountGaps) : null,
      mintBurn: ledger ? { totalEvents: ledger.events.length, latestEventTsBySymbol, latestHourlyTs: hours.length ? Math.max(...hours) : null } : null,
    };
  });
}

/** `/api/health` (spec 2.8): exempt from key, never cached by the API (it reports live dependency state). */
export const HEALTH_ROUTES: RouteDecl[] = [
  {
    kind: "json", operationId: "getHealth", method: "GET", path: "/api/health", lane: "public", tag: "health", cache: "realtime", meta: false, cacheable: false,
    summary: "Service health (exempt from key)",
    description: "Health resource (spec 2.8). `clock` tells whether the replay clock (recorded builds) or the wall clock is in force; `stateStore` reports the key store; `blacklist` gives the freeze ledger's amount gaps (never escalating status), `mintBurn` the mint/burn ledger and its live lane (which sets status only when the build has a live ledger). See the README's \"Health of a recorded build\".",
    handler: async (ctx) => ({ payload: buildHealth(ctx.build, ctx.now, ctx.clock, { stateStore: ctx.services.stateStore?.(), onchain: await onchainInputs(ctx.build) }), dataAsOf: null }),
  },
];
