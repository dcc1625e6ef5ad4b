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
 * One coin of the registry: the single record every pipeline, artifact and route joins on.
 * Sources: DefiLlama `peggedData` metadata and `/stablecoins` list, the Pharos curated core
 * extract (contracts, flags) and the Pharos cemetery (dead coins).
 */
export const CoinSchema = z.object({
  id: StablecoinIdSchema,
  llamaId: z.string().nullable(),
  geckoId: z.string().nullable(),
  name: z.string(),
  symbol: z.string(),
  /** DefiLlama peg type key, e.g. `peggedUSD`, `peggedEUR`, `peggedXAU`. */
  pegType: z.string().regex(/^pegged[A-Z]+$/),
  /** ISO currency (or `XAU`, `VAR`) the coin tracks. */
  pegCurrency: z.string(),
  pegMechanism: z.string(),
  isDead: z.boolean(),
  /** ISO date (or month/year) of death, when dead. */
  deadFrom: z.string().nullable(),
  causeOfDeath: z.string().nullable(),
  contracts: z.array(ContractDeploymentSchema),
  /** Which inputs contributed to this record. */
  provenance: z.array(z.enum(["defillama-metadata", "defillama-list", "pharos-core", "pharos-cemetery"])),
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
});
export type Registry = z.infer<typeof RegistrySchema>;
