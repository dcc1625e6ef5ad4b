import type { BuildManifest } from "../../site-data/manifest.ts";
import { causesOf, check } from "./causes.ts";
import { age, isoMinute } from "./format.ts";
import type { BlacklistHealth, Check, MintBurnHealth, OnchainHealthInputs, StatusCause } from "./types.ts";

/** Manifest source of decoded on-chain events (recorded logs and the live ledger). */
const ONCHAIN_ENDPOINT = "onchain.events";
/** A coin with tracked supply contracts whose newest mint/burn is older than this (s) is a stale major. */
const MINT_BURN_STALE_COIN_SEC = 7 * 86400;

/**
 * The `mintBurn` section: newest event and hour, coins whose newest event is older than 7 days
 * (`staleMajorSymbols`), and the live lane's sync freshness from the last ledger sync
 * (fresh ≤ 60 min, degraded ≤ 90 min, stale beyond). Without a live ledger the lane is reported
 * stale with a warning; buildHealth then leaves the top-level status alone (no lane is running).
 */
export function mintBurnHealth(
  inputs: OnchainHealthInputs["mintBurn"],
  lastLiveSyncAt: number | null,
  now: number,
): MintBurnHealth | null {
  if (!inputs) return null;
  const latest = Object.values(inputs.latestEventTsBySymbol);
  const latestEventTs = latest.length ? Math.max(...latest) : null;
  const stale = Object.entries(inputs.latestEventTsBySymbol)
    .filter(([, ts]) => now - ts > MINT_BURN_STALE_COIN_SEC)
    .map(([sym]) => sym)
    .sort();
  const at = lastLiveSyncAt;
  const ageSec = at === null ? null : Math.max(0, now - at);
  const freshnessStatus =
    ageSec !== null && ageSec <= 3600 ? "fresh" : ageSec !== null && ageSec <= 5400 ? "degraded" : "stale";
  const warning =
    at === null
      ? "no live mint/burn ingestion in this build: flows come from recorded log archives only (configure BALLAST_RPC_<CHAIN> and run `npx tsx build/onchain-cli.ts ingest` before the build)"
      : freshnessStatus === "fresh"
        ? null
        : `last live sync ${isoMinute(at)}, ${age(Math.max(0, now - at))} before now (fresh up to 60 min, degraded up to 90)`;
  return {
    totalEvents: inputs.totalEvents,
    latestEventTs,
    latestHourlyTs: inputs.latestHourlyTs,
    freshnessAgeSec: latestEventTs === null ? null : Math.max(0, now - latestEventTs),
    majorStaleCount: stale.length,
    staleMajorSymbols: stale,
    sync: { lastSuccessfulSyncAt: at, freshnessStatus, warning, criticalLaneHealthy: freshnessStatus !== "stale" },
  };
}

/**
 * The on-chain sections of build `m` at `now` (Unix s): `mintBurn` (mintBurnHealth, the live lane's
 * last sync from the build's live `onchain.events` captures) and `blacklist` (the freeze ledger's
 * amount gaps, echoed). A live lane that is degraded or stale sets the status to that (cause
 * `mint-burn-lane`); without a live ledger its warning is a note. Amount gaps are a note and never
 * escalate status (spec 2.8). Sections are null without their artifact.
 */
export function onchainCheck(
  m: Pick<BuildManifest, "sources">,
  inputs: OnchainHealthInputs | undefined,
  now: number,
): Check<{ blacklist: BlacklistHealth | null; mintBurn: MintBurnHealth | null }> {
  const causes: StatusCause[] = [];
  const statusWarnings: string[] = [];
  const notes: string[] = [];
  // The live lane's last sync: the on-chain ledger capture of this build (manifest), null without one.
  const liveSync =
    m.sources
      .find((x) => x.endpoint === ONCHAIN_ENDPOINT)
      ?.captures.filter((c) => c.origin === "live")
      .map((c) => c.observedAt) ?? [];
  const mintBurn = mintBurnHealth(inputs?.mintBurn ?? null, liveSync.length ? Math.max(...liveSync) : null, now);
  if (mintBurn) {
    const sync = mintBurn.sync;
    if (sync.lastSuccessfulSyncAt !== null && sync.freshnessStatus !== "fresh") {
      causes.push(...causesOf(sync.freshnessStatus, "mint-burn-lane", `mint/burn lane ${sync.freshnessStatus}`));
      statusWarnings.push(
        `mint/burn lane ${sync.freshnessStatus} (sets status ${sync.freshnessStatus}): ${sync.warning}`,
      );
    } else if (sync.warning) notes.push(`mint/burn lane (no effect on status): ${sync.warning}`);
  }
  const blacklist = inputs?.blacklist ?? null;
  if (blacklist && blacklist.missingAmounts > 0) {
    notes.push(
      `freeze ledger amount gaps (no effect on status; spec 2.8 escalates blacklist severity only when its loader fails): ${blacklist.missingAmounts} of ${blacklist.totalEvents} events have no amount yet (${(blacklist.missingRatio * 100).toFixed(1)}%), ${blacklist.recentMissingAmounts} in the last 30 days; /api/blacklist-summary \`dataQuality\` applies the 1%/2% thresholds.`,
    );
  }
  return check({ blacklist, mintBurn }, { causes, statusWarnings, notes });
}
