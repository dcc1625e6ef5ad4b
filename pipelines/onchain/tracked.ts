import type { FamilyEvent, Registry } from "../registry/schema.ts";
import { configKey } from "./contract.ts";

/**
 * One tracked (coin, chain, contract, family) of the registry: the unit of on-chain ingestion and
 * of its sync cursor. `purpose` says which ledger it feeds (freeze/blacklist or mint/burn). A
 * config without a contract address or decimals is `unsupportedReason`-flagged and never read.
 */
export interface TrackedConfig {
  configKey: string;
  stablecoinId: string;
  symbol: string;
  chain: string;
  /** EVM chain id; null on Tron. */
  evmChainId: number | null;
  /** Lowercase 0x-hex (EVM) or base58 (Tron); null when unresolved. */
  address: string | null;
  decimals: number | null;
  startBlock: number | null;
  family: string;
  events: FamilyEvent[];
  purpose: "freeze" | "supply";
  contractSource: "primary" | "traded";
  /** Null when ingestible; else why the config is deferred (reported in coverage, never guessed). */
  unsupportedReason: string | null;
}

/** Every tracked config of the registry, sorted by config key (freeze and supply contracts alike). */
export function trackedConfigs(registry: Registry): TrackedConfig[] {
  const out: TrackedConfig[] = [];
  for (const coin of registry.coins) {
    for (const [purpose, list] of [
      ["freeze", coin.freezeContracts],
      ["supply", coin.supplyContracts],
    ] as const) {
      for (const c of list) {
        const unsupportedReason =
          c.address === null ? "contract-address-unresolved" : c.decimals === null ? "decimals-unknown" : null;
        out.push({
          configKey: configKey(coin.id, c.chain, c.address ?? "unresolved", c.family),
          stablecoinId: coin.id,
          symbol: coin.symbol.toUpperCase(),
          chain: c.chain,
          evmChainId: c.evmChainId,
          address: c.address,
          decimals: c.decimals,
          startBlock: c.startBlock,
          family: c.family,
          events: registry.eventFamilies[c.family] ?? [],
          purpose,
          contractSource: c.contractSource,
          unsupportedReason,
        });
      }
    }
  }
  return out.sort((a, b) => (a.configKey < b.configKey ? -1 : a.configKey > b.configKey ? 1 : 0));
}
