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
  signature: z.string().regex(/^[A-Za-z0-9_]+\([a-z0-9,\[\]]*\)$/),
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

/** Where a registry record's facts came from. `unreviewed`: added at build time from an upstream list, not curated. */
export const ProvenanceSchema = z.enum(["curated", "defillama-metadata", "defillama-list", "pharos-core", "pharos-cemetery", "unreviewed"]);

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
  deadFrom: z.string().regex(/^\d{4}(-\d{2}(-\d{2})?)?$/).nullable(),
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
});
export type Coin = z.infer<typeof CoinSchema>;

/** A chain known to the registry: our slug plus the upstream display label. */
export const ChainSchema = z.object({
  id: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/),
  name: z.string(),
});
export type Chain = z.infer<typeof ChainSchema>;

export const RegistrySchema = z.object({
  coins: z.array(CoinSchema),
  chains: z.array(ChainSchema),
  /** Known bridge contracts per chain: a mint to / burn from one is a bridge transfer, not issuance (curated). */
  bridges: z.array(z.object({ chain: z.string(), address: z.string(), name: z.string() })),
  /** On-chain event families by key (freeze families of the tracked-contracts config, supply families curated). */
  eventFamilies: z.record(z.string(), z.array(FamilyEventSchema)),
});
export type Registry = z.infer<typeof RegistrySchema>;
