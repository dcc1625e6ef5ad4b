import type { Coin } from "../../pipelines/registry/schema.ts";

/**
 * A minimal curated registry record for fixtures: a fiat-backed coin whose symbol and issuer come from
 * its id (`"aaa-one"` → symbol `AAA`, issuer `one`), with no gecko id, contracts or archives unless
 * `extra` sets them.
 */
export function registryCoin(
  id: string,
  llamaId: string,
  pegType: string,
  pegCurrency: string,
  extra: Partial<Coin> = {},
): Coin {
  return {
    id,
    llamaId,
    geckoId: null,
    name: id,
    symbol: id.split("-")[0].toUpperCase(),
    issuer: id.split("-")[1],
    pegType,
    pegCurrency,
    pegMechanism: "fiat-backed",
    navToken: false,
    floatingPeg: false,
    exchangeSymbols: [],
    archiveNames: [],
    deadFrom: null,
    causeOfDeath: null,
    contracts: [],
    freezeContracts: [],
    supplyContracts: [],
    provenance: ["defillama-list"],
    ...extra,
  };
}
