import { z } from "zod";

/** Canonical stablecoin id: `<ticker>-<issuer>`, lowercase, hyphen-separated (spec 2.1). */
export const StablecoinIdSchema = z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)+$/);

/** A curated on-chain deployment (spec 2.2 ContractDeployment). */
export const ContractDeploymentSchema = z.object({
  chain: z.string(),
  address: z.string(),
  decimals: z.number().int().nonnegative(),
});

/**
 * One event of a tracked on-chain family: canonical signature, keccak256 topic0 (verified), what it
 * does, whether it carries an amount, and where the affected address and amount sit in the log
 * (topics index, 32-byte data word, or an ABI-encoded address[] in data; Tron: decoded result key).
 */
export const FamilyEventSchema = z.object({
  signature: z.string().regex(/^[A-Za-z0-9_]+\([a-z0-9,[\]]*\)$/),
  topic0: z.string().regex(/^0x[0-9a-f]{64}$/),
  /** `transfer`: an ERC-20 Transfer, a mint when from is the zero address and a burn when to is. */
  kind: z.enum(["blacklist", "unblacklist", "destroy", "mint", "burn", "transfer"]),
  hasAmount: z.boolean(),
  addressTopicIndex: z.number().int().min(1).max(3).optional(),
  addressDataIndex: z.number().int().min(0).optional(),
  addressArrayData: z.boolean().optional(),
  amountTopicIndex: z.number().int().min(1).max(3).optional(),
  amountDataIndex: z.number().int().min(0).optional(),
  tronResultKey: z.string().optional(),
  /** Free-text note of the upstream config (e.g. where a missing amount is read from). */
  amountNote: z.string().optional(),
});
export type FamilyEvent = z.infer<typeof FamilyEventSchema>;

/**
 * A tracked contract of a coin: freeze/blacklist family or supply (mint/burn) family on one chain.
 * `address` null: not yet resolved (the config is reported as unsupported-deferred, never guessed).
 * `startBlock` null: read from the contract's first block the provider serves. `evmChainId` null on Tron.
 */
export const TrackedContractSchema = z.object({
  chain: z.string(),
  evmChainId: z.number().int().positive().nullable(),
  address: z.string().nullable(),
  decimals: z.number().int().nonnegative().nullable(),
  startBlock: z.number().int().nonnegative().nullable(),
  /** Key of the registry's `eventFamilies`. */
  family: z.string(),
  /** `primary` token contract or a `traded` variant (e.g. USDT0 on Optimism). */
  contractSource: z.enum(["primary", "traded"]),
});
export type TrackedContract = z.infer<typeof TrackedContractSchema>;

const RISK_FACT_FIELDS = [
  "backing",
  "collateralQuality",
  "custodyModel",
  "governance",
  "chainTier",
  "deploymentModel",
  "canBeBlacklisted",
  "proofOfReserves",
  "dependencies",
] as const;
/** Names of the fact fields of a risk block (every one must be cited by a source). */
export const RiskFactFieldSchema = z.enum(RISK_FACT_FIELDS);
export type RiskFactField = z.infer<typeof RiskFactFieldSchema>;

/** One upstream a coin's risk depends on (report-card dependency graph edge upstream → this coin). */
export const RiskDependencySchema = z.strictObject({
  /** Registry coin id of the upstream (must exist in the registry). */
  id: StablecoinIdSchema,
  /** Share of this coin's backing or risk exposed to the upstream, in (0, 1]; a coin's weights sum to at most 1. */
  weight: z.number().gt(0).lte(1),
  /**
   * `collateral`: the upstream is part of the reserves/collateral (DAI's USDC in the PSM); `custody`: it
   * holds the backing; `bridge`: the coin is a bridged form of it; `wrapper`: the coin wraps it (staked
   * or savings share, Binance-Peg); `mechanism`: the coin shares its system (USDS ↔ DAI).
   */
  type: z.enum(["collateral", "custody", "bridge", "wrapper", "mechanism"]),
});
export type RiskDependency = z.infer<typeof RiskDependencySchema>;

/**
 * Citation schema of a curated fact block whose fact fields are `fields`: which fields a source
 * supports, a label and a public https URL. Shared by the `risk` and `redemption` blocks.
 */
export function citationSchema<F extends readonly [string, ...string[]]>(fields: F) {
  return z.strictObject({
    /** Fact fields of the block this source supports. */
    fields: z.array(z.enum(fields)).min(1),
    /** `pharos-core <_source.path>@<commit>` for the recorded Pharos extract, else the page's title. */
    label: z.string().min(1),
    /** Public URL: the Pharos file at its commit, or the issuer's documentation / transparency page. */
    url: z.url({ protocol: /^https$/ }),
  });
}

/**
 * The every-field-cited rule of a curated fact block: one issue on `sources` per fact field that no
 * source names (`no source cites <field>`). Call from the block's superRefine.
 */
export function requireCitations(
  fields: readonly string[],
  sources: { fields: readonly string[] }[],
  ctx: z.RefinementCtx,
): void {
  const cited = new Set(sources.flatMap((s) => s.fields));
  for (const f of fields)
    if (!cited.has(f)) ctx.addIssue({ code: "custom", path: ["sources"], message: `no source cites ${f}` });
}

/** Citation of a risk block: which fact fields it supports, a label and a public URL. */
export const RiskSourceSchema = citationSchema(RISK_FACT_FIELDS);
export type RiskSource = z.infer<typeof RiskSourceSchema>;

/**
 * Curated risk facts of a coin: the inputs of its risk grade (safety score, report card). Every
 * field is required; a coin whose facts are not known has no block (`risk: null`, graded `NR`).
 * Facts come from the recorded Pharos core extract where it has them, else from the issuer's public
 * documentation; `sources` cites each field. Judged for the coin as it operates (not its history).
 */
export const RiskFactsSchema = z
  .strictObject({
    /**
     * What backs the coin: `fiat-reserves` (cash, T-bills, repo held by the issuer), `treasury-fund`
     * (tokenised T-bill / money-market fund shares, or a coin backed by them), `commodity` (allocated
     * metal), `crypto-overcollateralized` (CDP), `delta-neutral` (spot crypto hedged with short perps),
     * `rwa-credit` (private credit / loans), `algorithmic` (own-token or seigniorage), `hybrid` (mix of
     * several, none dominant by design).
     */
    backing: z.enum([
      "fiat-reserves",
      "treasury-fund",
      "commodity",
      "crypto-overcollateralized",
      "delta-neutral",
      "rwa-credit",
      "algorithmic",
      "hybrid",
    ]),
    /**
     * Risk tier of what backs the coin, reserve-weighted: `very-low` (T-bills, cash at top banks,
     * allocated gold), `low` (mostly very-low with a minority of riskier assets, or ETH-only CDPs),
     * `medium` (diversified crypto / RWA collateral), `high` (delta-neutral books, bridged or wrapped
     * collateral, illiquid assets), `very-high` (sanctioned bank deposits, frozen or impaired reserves,
     * reflexive own-token collateral).
     */
    collateralQuality: z.enum(["very-low", "low", "medium", "high", "very-high"]),
    /**
     * Who holds the backing: `onchain` (smart contracts), `institutional-top` (top-tier banks and
     * custodians: BNY, State Street, national trust banks), `institutional-regulated` (licensed
     * custodians), `institutional-unregulated` (custodians without a comparable licence, off-exchange
     * settlement), `institutional-sanctioned` (sanctioned institution), `cex` (a centralised exchange).
     */
    custodyModel: z.enum([
      "onchain",
      "institutional-top",
      "institutional-regulated",
      "institutional-unregulated",
      "institutional-sanctioned",
      "cex",
    ]),
    /**
     * Who can change the coin: `immutable-code` (no admin), `dao-governance` (token-holder votes),
     * `multisig` (admin keys of a team), `regulated-entity` (licensed, supervised, independently audited
     * issuer), `single-entity` (a company without that supervision), `wrapper` (inherits the wrapped coin's).
     */
    governance: z.enum([
      "immutable-code",
      "dao-governance",
      "multisig",
      "regulated-entity",
      "single-entity",
      "wrapper",
    ]),
    /**
     * Tier of the coin's home chain (where it is issued against its backing; for a coin the issuer
     * mints natively on several chains, the one holding most of its supply): `ethereum`, `stage1-l2`
     * (rollup at L2BEAT stage 1: Arbitrum, Base, OP Mainnet), `mature-alt-l1` (Tron, BNB Chain, Solana,
     * Avalanche, Stellar, XRPL), `established-alt-l1` (younger or smaller L1s: Gnosis, Sui), `unproven`.
     */
    chainTier: z.enum(["ethereum", "stage1-l2", "mature-alt-l1", "established-alt-l1", "unproven"]),
    /**
     * How the coin reaches other chains: `single-chain`, `canonical-bridge` (the rollups' own bridges),
     * `native-multichain` (the issuer mints natively on each chain, incl. burn-and-mint like CCTP),
     * `third-party-bridge` (LayerZero OFT, CCIP, Wormhole, an exchange's peg).
     */
    deploymentModel: z.enum(["single-chain", "canonical-bridge", "native-multichain", "third-party-bridge"]),
    /**
     * Whether holders can be frozen: `true` (the token contract has a freeze/blacklist), `false` (no
     * such power), `"possible"` (an admin can add one: upgradeable contract, permissioned token without
     * a documented freeze), `"inherited"` (≥25% of reserves are blacklistable coins, e.g. DAI via USDC).
     */
    canBeBlacklisted: z.union([z.boolean(), z.enum(["possible", "inherited"])]),
    /**
     * Reserve verification: `real-time` (on-chain collateral or a live proof-of-reserve feed),
     * `independent-audit` (auditor's examination of the reserves, monthly, or a registered fund's
     * audited reporting), `attestation` (periodic accountant's attestation, or a private fund's
     * administrator reports), `self-reported` (issuer's own reports), `none`.
     */
    proofOfReserves: z.enum(["real-time", "independent-audit", "attestation", "self-reported", "none"]),
    /** Upstream coins this coin's risk depends on (may be empty); weights sum to at most 1. */
    dependencies: z.array(RiskDependencySchema),
    /** Citations: every fact field above is named by at least one source. */
    sources: z.array(RiskSourceSchema).min(1),
  })
  .superRefine((r, ctx) => {
    const total = r.dependencies.reduce((s, d) => s + d.weight, 0);
    // Tolerance for decimal sums such as 0.7 + 0.2 + 0.1.
    if (total > 1 + 1e-9)
      ctx.addIssue({
        code: "custom",
        path: ["dependencies"],
        message: `dependency weights sum to ${+total.toFixed(6)}, more than 1`,
      });
    const ids = r.dependencies.map((d) => d.id);
    for (const [i, id] of ids.entries())
      if (ids.indexOf(id) !== i)
        ctx.addIssue({ code: "custom", path: ["dependencies", i, "id"], message: `dependency ${id} listed twice` });
    requireCitations(RISK_FACT_FIELDS, r.sources, ctx);
  });
export type RiskFacts = z.infer<typeof RiskFactsSchema>;

/**
 * The redemption vocabulary (spec 2.12), declared once: the curated facts below and the published
 * `/api/redemption-backstops` entries (site-data/redemption-backstops.ts) use these enums.
 * Route families: `stablecoin-redeem` (the issuer's contract swaps it for another stablecoin),
 * `basket-redeem` (for a basket of assets), `collateral-redeem` (for the protocol's collateral, e.g.
 * Liquity troves), `psm-swap` (a peg stability module swaps it 1:1 for a reserve stablecoin),
 * `queue-redeem` (requests wait in a queue), `offchain-issuer` (the issuer pays fiat off-chain).
 */
export const RouteFamilySchema = z.enum([
  "stablecoin-redeem",
  "basket-redeem",
  "collateral-redeem",
  "psm-swap",
  "queue-redeem",
  "offchain-issuer",
]);
/** Who can start a redemption: `permissionless-onchain`, `whitelisted-onchain` (allow-listed addresses), `issuer-api` (an issuer account or platform), `manual` (by request). */
export const AccessModelSchema = z.enum(["permissionless-onchain", "whitelisted-onchain", "issuer-api", "manual"]);
/** When the holder is paid: `atomic` (same transaction), `immediate` (minutes), `same-day`, `days` (business days), `queued`. */
export const SettlementModelSchema = z.enum(["atomic", "immediate", "same-day", "days", "queued"]);
/** How the payout is set: `deterministic-onchain` (contract rule), `deterministic-basket`, `rules-based-nav` (published NAV), `opaque` (issuer quote or discretion). */
export const ExecutionModelSchema = z.enum([
  "deterministic-onchain",
  "deterministic-basket",
  "rules-based-nav",
  "opaque",
]);
/** What the holder receives: `stable-single` (one stablecoin or fiat), `stable-basket`, `bluechip-collateral` (ETH, BTC, gold), `mixed-collateral`, `nav` (fund shares at NAV). */
export const OutputAssetTypeSchema = z.enum([
  "stable-single",
  "stable-basket",
  "bluechip-collateral",
  "mixed-collateral",
  "nav",
]);
/** How the holder's fee is set. */
export const FeeModelKindSchema = z.enum(["fixed-bps", "formula", "documented-variable", "undisclosed-reviewed"]);
/** Who may redeem: `any`, `verified-customer` (KYC'd account), `whitelisted-primary` (allow-listed institutions), `issuer-discretionary`. */
export const HolderEligibilitySchema = z.enum([
  "any",
  "verified-customer",
  "whitelisted-primary",
  "issuer-discretionary",
]);

const REDEMPTION_FACT_FIELDS = [
  "routeFamily",
  "accessModel",
  "settlementModel",
  "executionModel",
  "outputAssetType",
  "capacity",
  "fee",
  "queueEnabled",
  "minimumRedeemUsd",
  "holderEligibility",
] as const;
/** Names of the fact fields of a redemption block (every one must be cited by a source). */
export const RedemptionFactFieldSchema = z.enum(REDEMPTION_FACT_FIELDS);
export type RedemptionFactField = z.infer<typeof RedemptionFactFieldSchema>;

/** Citation of a redemption block: which fact fields it supports, a label and a public URL (the issuer's redemption / docs page). */
export const RedemptionSourceSchema = citationSchema(REDEMPTION_FACT_FIELDS);
export type RedemptionSource = z.infer<typeof RedemptionSourceSchema>;

/**
 * Curated redemption facts of a coin: how a holder turns it back into something else at par (or at
 * NAV), the inputs of the redemption backstop score (`ballast-redemption-backstop-v1`, spec 2.12).
 * Every field is required; a coin whose route is not known with confidence has no block. `sources`
 * cites each fact field (the issuer's redemption or documentation page). Judged for the route as it
 * operates (not its history).
 */
export const RedemptionFactsSchema = z
  .strictObject({
    /**
     * `stablecoin-redeem` (the issuer's contract swaps it for another stablecoin), `basket-redeem` (for
     * a basket of assets), `collateral-redeem` (for the protocol's collateral, e.g. Liquity troves),
     * `psm-swap` (a peg stability module swaps it 1:1 for a reserve stablecoin), `queue-redeem`
     * (requests wait in a queue), `offchain-issuer` (the issuer pays fiat off-chain to its customers).
     */
    routeFamily: RouteFamilySchema,
    /** Who can start it: `permissionless-onchain`, `whitelisted-onchain` (allow-listed addresses), `issuer-api` (an issuer account or platform), `manual` (by request). */
    accessModel: AccessModelSchema,
    /** When the holder is paid: `atomic` (same transaction), `immediate` (minutes), `same-day`, `days` (business days), `queued`. */
    settlementModel: SettlementModelSchema,
    /** How the payout is set: `deterministic-onchain` (contract rule), `deterministic-basket`, `rules-based-nav` (published NAV), `opaque` (issuer quote or discretion). */
    executionModel: ExecutionModelSchema,
    /** What the holder receives: `stable-single` (one stablecoin or fiat), `stable-basket`, `bluechip-collateral` (ETH, BTC, gold), `mixed-collateral`, `nav` (fund shares at NAV). */
    outputAssetType: OutputAssetTypeSchema,
    /**
     * Immediate redemption capacity: `documented-bound` (a limit the issuer or protocol documents) or
     * `heuristic` (our stated assumption, named in `basis`); USD, share of supply (0-1], or both; null
     * when not stated. The score uses whichever is given (the other derived from current supply).
     */
    capacity: z.strictObject({
      kind: z.enum(["documented-bound", "heuristic"]),
      immediateCapacityUsd: z.number().nonnegative().nullable(),
      immediateCapacityRatio: z.number().gt(0).lte(1).nullable(),
      basis: z.string().min(1),
    }),
    /** Holder's fee: bps when known (null otherwise), how it is set, and the documented terms in words. */
    fee: z.strictObject({
      feeBps: z.number().nonnegative().nullable(),
      feeModelKind: FeeModelKindSchema,
      feeDescription: z.string().min(1),
    }),
    /** Redemptions wait in a queue (withdrawal request, cooldown). */
    queueEnabled: z.boolean(),
    /** Smallest redemption (USD), null when none is documented. */
    minimumRedeemUsd: z.number().nonnegative().nullable(),
    /** Who may redeem: `any`, `verified-customer` (KYC'd account), `whitelisted-primary` (allow-listed institutions), `issuer-discretionary`. */
    holderEligibility: HolderEligibilitySchema,
    /** Documentation URLs of the route (published with the entry). */
    docs: z.array(z.url({ protocol: /^https$/ })).min(1),
    /** Free-text notes (published with the entry). */
    notes: z.string(),
    /** Citations: every fact field above is named by at least one source. */
    sources: z.array(RedemptionSourceSchema).min(1),
  })
  .superRefine((r, ctx) => {
    if (
      r.capacity.immediateCapacityUsd === null &&
      r.capacity.immediateCapacityRatio === null &&
      r.capacity.kind === "documented-bound"
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["capacity"],
        message: "a documented bound needs immediateCapacityUsd or immediateCapacityRatio",
      });
    }
    if (r.fee.feeModelKind === "fixed-bps" && r.fee.feeBps === null)
      ctx.addIssue({ code: "custom", path: ["fee", "feeBps"], message: "fixed-bps needs feeBps" });
    requireCitations(REDEMPTION_FACT_FIELDS, r.sources, ctx);
  });
export type RedemptionFacts = z.infer<typeof RedemptionFactsSchema>;

/** Risk tier of a reserve component, as the Pharos core extract records it. */
export const ReserveRiskSchema = z.enum(["very-low", "low", "medium", "high", "very-high"]);

/**
 * Curated reserve composition of a coin (the `/api/stablecoin-reserves` fallback): the Pharos core
 * extract's `reserves` (name, share in percent, risk tier) carried by the registry generator with
 * its source; null when the extract has none. Undated, like every registry fact.
 */
export const ReserveCompositionSchema = z.strictObject({
  components: z
    .array(z.strictObject({ name: z.string().min(1), pct: z.number().min(0).max(100), risk: ReserveRiskSchema }))
    .min(1),
  /** `pharos-core <_source.path>@<commit>` and the Pharos file at its commit. */
  source: z.strictObject({ label: z.string().min(1), url: z.url({ protocol: /^https$/ }) }),
});
export type ReserveComposition = z.infer<typeof ReserveCompositionSchema>;

/** Where a registry record's facts came from. `unreviewed`: added at build time from an upstream list, not curated. */
export const ProvenanceSchema = z.enum([
  "curated",
  "defillama-metadata",
  "defillama-list",
  "pharos-core",
  "pharos-cemetery",
  "unreviewed",
]);

/**
 * One coin of the registry: the single record every pipeline, artifact and route joins on.
 * Curated facts (issuer, NAV/floating flags, upstream ids, contracts, dead date) merged with
 * DefiLlama `peggedData` metadata and `/stablecoins` list, the Pharos core extract and cemetery.
 */
export const CoinSchema = z.object({
  /** `<ticker>-<issuer>` (spec 2.1); the issuer part comes from `issuer`, never from the coin's name. */
  id: StablecoinIdSchema,
  /** DefiLlama stablecoin id (`/stablecoin/{id}`), null when DefiLlama does not list the coin. */
  llamaId: z.string().nullable(),
  /** CoinGecko coin id, null when unknown. */
  geckoId: z.string().nullable(),
  name: z.string(),
  /** Ticker as the issuer writes it. */
  symbol: z.string(),
  /** Issuer or protocol display name (curated), e.g. `Circle`, `Aave`, `Tron DAO Reserve`. */
  issuer: z.string().min(1),
  /** DefiLlama peg type key, e.g. `peggedUSD`, `peggedEUR`, `peggedXAU`, `peggedVAR`. */
  pegType: z.string().regex(/^pegged[A-Z]+$/),
  /** ISO currency (or `XAU`, `XAG`, `VAR`) the coin tracks; its peg reference per day. */
  pegCurrency: z.string(),
  pegMechanism: z.string(),
  /** Yield-accruing NAV token: its price follows a rising NAV, not par; never judged against par. */
  navToken: z.boolean(),
  /** Floating peg (target moves: CPI index, redemption rate); never judged against a fixed reference. */
  floatingPeg: z.boolean(),
  /** Symbols of the coin on exchanges we read (e.g. Binance `USDC`). */
  exchangeSymbols: z.array(z.string()),
  /** Names of the coin in recorded archives (e.g. the CoinGecko market-cap scrape's `coin_name`). */
  archiveNames: z.array(z.string()),
  /** Date (or month/year: `YYYY-MM-DD`, `YYYY-MM`, `YYYY`) of death, when dead; judged against as-of at build time. */
  deadFrom: z
    .string()
    .regex(/^\d{4}(-\d{2}(-\d{2})?)?$/)
    .nullable(),
  causeOfDeath: z.string().nullable(),
  /**
   * Peak market cap (USD) of a dead coin as the Pharos cemetery records it; absent for live coins. A
   * fact about the coin before its death, exposed to a build only once the death is known at as-of.
   */
  peakMcapUsd: z.number().positive().optional(),
  contracts: z.array(ContractDeploymentSchema),
  /** Freeze/blacklist contracts tracked for `/api/blacklist` (Pharos tracked-contracts config plus curated ones). */
  freezeContracts: z.array(TrackedContractSchema),
  /** Token contracts whose mint/burn events are tracked for `/api/mint-burn-*` (curated). */
  supplyContracts: z.array(TrackedContractSchema),
  /** Which inputs contributed to this record. */
  provenance: z.array(ProvenanceSchema),
  /**
   * Curated risk facts (inputs of the risk grade), null when not curated (graded `NR`). The generator
   * always writes the key; it may be absent only in hand-built registries (tests), meaning null.
   */
  risk: RiskFactsSchema.nullable().optional(),
  /** Curated redemption facts (inputs of the redemption backstop score), null when not curated; absent means null. */
  redemption: RedemptionFactsSchema.nullable().optional(),
  /** Reserve composition from the Pharos core extract (reserves fallback), null when it has none; absent means null. */
  reserves: ReserveCompositionSchema.nullable().optional(),
});
export type Coin = z.infer<typeof CoinSchema>;

/**
 * The record fields of a coin with no exchange symbols, archive names, death (alive: `deadFrom` and
 * `causeOfDeath` null) or contract addresses (supply, freeze or other); fresh arrays per call.
 */
export const noChainOrArchiveRecords = (): Pick<
  Coin,
  "exchangeSymbols" | "archiveNames" | "deadFrom" | "causeOfDeath" | "contracts" | "freezeContracts" | "supplyContracts"
> => ({
  exchangeSymbols: [],
  archiveNames: [],
  deadFrom: null,
  causeOfDeath: null,
  contracts: [],
  freezeContracts: [],
  supplyContracts: [],
});

/** Curated chain tiers, best first (the vocabulary of RiskFactsSchema `chainTier`). */
export const CHAIN_TIERS = ["ethereum", "stage1-l2", "mature-alt-l1", "established-alt-l1", "unproven"] as const;

/**
 * A chain known to the registry: our slug plus the upstream display label, and, when curated, its
 * `tier` (the `chainTier` vocabulary: `ethereum`, `stage1-l2` — rollups at L2BEAT stage 1 —,
 * `mature-alt-l1`, `established-alt-l1`, `unproven`) with the `tierSource` it rests on. Chains without a
 * curated tier omit both (chain health then uses a neutral environment score and says so). `tierSource.url`
 * is null for tiers that rest on the registry's own vocabulary rather than an external ranking.
 */
export const ChainSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/),
    name: z.string(),
    tier: z.enum(CHAIN_TIERS).optional(),
    tierSource: z.object({ label: z.string().min(1), url: z.string().url().nullable() }).optional(),
  })
  .refine((c) => (c.tier === undefined) === (c.tierSource === undefined), {
    message: "tier and tierSource go together",
    path: ["tierSource"],
  });
export type Chain = z.infer<typeof ChainSchema>;

export const RegistrySchema = z
  .object({
    coins: z.array(CoinSchema),
    chains: z.array(ChainSchema),
    /** Known bridge contracts per chain: a mint to / burn from one is a bridge transfer, not issuance (curated). */
    bridges: z.array(z.object({ chain: z.string(), address: z.string(), name: z.string() })),
    /** On-chain event families by key (freeze families of the tracked-contracts config, supply families curated). */
    eventFamilies: z.record(z.string(), z.array(FamilyEventSchema)),
  })
  .superRefine((reg, ctx) => {
    // Risk dependencies name registry coins (the report-card dependency graph joins on them).
    const ids = new Set(reg.coins.map((c) => c.id));
    for (const [i, c] of reg.coins.entries()) {
      for (const [j, d] of (c.risk?.dependencies ?? []).entries()) {
        if (!ids.has(d.id) || d.id === c.id)
          ctx.addIssue({
            code: "custom",
            path: ["coins", i, "risk", "dependencies", j, "id"],
            message: d.id === c.id ? "a coin cannot depend on itself" : `unknown registry coin ${d.id}`,
          });
      }
    }
  });
export type Registry = z.infer<typeof RegistrySchema>;
