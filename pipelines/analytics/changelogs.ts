import { fileURLToPath } from "node:url";
import { DEX_LIQUIDITY_VERSION } from "./dex-liquidity.version.ts";
import { DEPEG_METHODOLOGY_VERSION } from "./depeg-detection.version.ts";
import { READINESS_VERSION, RESOLVER_POLICY_VERSION } from "./depeg-resolver.version.ts";
import { FREEZE_METHODOLOGY, MINT_BURN_METHODOLOGY } from "../onchain/methodology.ts";
import { PEG_SCORE_VERSION } from "./peg-score.version.ts";
import { PRICE_CONSENSUS_VERSION } from "./price-consensus.version.ts";
import { LINEAGE_CHECK_VERSION } from "./source-lineage-version.ts";
import { REDEMPTION_BACKSTOP_VERSION } from "./redemption-backstops.version.ts";
import { REPORT_CARD_VERSION, SAFETY_SCORE_VERSION } from "./safety-score.version.ts";
import { YIELD_VERSION } from "./yield-scoring.version.ts";
import { PSI_VERSION } from "./stability-index.version.ts";
import { DEWS_VERSION } from "./stress-signals.version.ts";
import { CHAIN_HEALTH_METHODOLOGY_VERSION } from "./chain-health.version.ts";
import { DEPEG_AUDIT_VERSION } from "./depeg-audit.version.ts";
import { DEWS_VALIDATION_VERSION } from "./dews-validation.version.ts";
import { SUPPLY_CHAIN_GUARD_VERSION, SUPPLY_VALUATION_VERSION } from "./supply.version.ts";

/**
 * One versioned analytic methodology and its changelog. `analytic` names the file
 * (`pipelines/analytics/changelogs/<analytic>.md`), `versionId` is the version in force (as the code
 * publishes it), `file` the changelog's absolute path on this machine, `path` the relative URL a
 * build serves it at (`/methodology/<analytic>.md`, the Methodology object's `changelogPath`,
 * spec 2.5), and `previousVersionIds` the earlier versions the changelog describes, newest first.
 */
export interface MethodologyChangelog {
  analytic: string;
  versionId: string;
  file: string;
  path: string;
  previousVersionIds: string[];
}

const entry = (analytic: string, versionId: string, previousVersionIds: string[]): MethodologyChangelog => ({
  analytic,
  versionId,
  file: fileURLToPath(new URL(`./changelogs/${analytic}.md`, import.meta.url)),
  path: `/methodology/${analytic}.md`,
  previousVersionIds,
});

/**
 * Every methodology version id the analytics publish, each with its changelog. One analytic may
 * carry several ids (the resolver's lock policy and readiness score share `depeg-resolver.md`).
 * A build copies each `file` to `methodology/<analytic>.md`; the API serves it at `path`.
 */
export const METHODOLOGY_CHANGELOGS: MethodologyChangelog[] = [
  entry("price-consensus", PRICE_CONSENSUS_VERSION, ["ballast-price-consensus-v2", "ballast-price-consensus-v1"]),
  entry("depeg-detection", DEPEG_METHODOLOGY_VERSION, ["ballast-depeg-v3", "ballast-depeg-v2", "ballast-depeg-v1"]),
  entry("peg-score", PEG_SCORE_VERSION, ["ballast-peg-score-v2", "ballast-peg-score-v1"]),
  entry("source-lineage-check", LINEAGE_CHECK_VERSION, []),
  entry("supply-chain-guard", SUPPLY_CHAIN_GUARD_VERSION, []),
  entry("supply-valuation", SUPPLY_VALUATION_VERSION, ["ballast-supply-valuation-v1"]),
  entry("depeg-resolver", RESOLVER_POLICY_VERSION, []),
  entry("depeg-resolver", READINESS_VERSION, []),
  entry("freeze-ledger", FREEZE_METHODOLOGY, ["ballast-freeze-v1"]),
  entry("mint-burn", MINT_BURN_METHODOLOGY, ["ballast-mint-burn-v1"]),
  entry("safety-score", SAFETY_SCORE_VERSION, ["ballast-safety-score-v1"]),
  entry("report-card", REPORT_CARD_VERSION, ["ballast-report-card-v1"]),
  entry("yield-rankings", YIELD_VERSION, []),
  entry("stability-index", PSI_VERSION, []),
  entry("stress-signals", DEWS_VERSION, []),
  entry("dex-liquidity", DEX_LIQUIDITY_VERSION, []),
  entry("redemption-backstops", REDEMPTION_BACKSTOP_VERSION, []),
  entry("chain-health", CHAIN_HEALTH_METHODOLOGY_VERSION, ["chain-health-0.1-unrated"]),
  entry("depeg-audit", DEPEG_AUDIT_VERSION, []),
  entry("dews-validation", DEWS_VALIDATION_VERSION, []),
];

/**
 * Relative URL of the changelog describing `versionId` (current or earlier), e.g.
 * `changelogPathOf("ballast-depeg-v2")` → `/methodology/depeg-detection.md`.
 * Throws an Error naming the id when no changelog describes it (a published version must have one).
 */
export function changelogPathOf(versionId: string): string {
  const c = METHODOLOGY_CHANGELOGS.find((m) => m.versionId === versionId || m.previousVersionIds.includes(versionId));
  if (!c)
    throw new Error(
      `no methodology changelog describes version ${versionId} (add it to pipelines/analytics/changelogs.ts)`,
    );
  return c.path;
}
