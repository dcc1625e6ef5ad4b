import { pegCurrencyOf, slug } from "./curated.ts";
import { type Coin, CoinSchema, noChainOrArchiveRecords, type Registry } from "./schema.ts";

/** One asset of the DefiLlama `/stablecoins` list, as far as the registry needs it. */
export interface ListAsset {
  /** DefiLlama id. */
  llamaId: string;
  name: string;
  symbol: string;
  geckoId: string | null;
  /** `pegged<CUR>`. */
  pegType: string;
  pegMechanism: string | null;
}

/** Issuer of every unreviewed record (a reviewer replaces it with the curated issuer and id). */
export const UNREVIEWED_ISSUER = "unreviewed";

/** Provisional id of an unreviewed list asset: `<slug(symbol)>-unreviewed-<slug(llamaId)>`. */
export function unreviewedCoinId(symbol: string, llamaId: string): string {
  return `${slug(symbol) || "coin"}-unreviewed-${slug(llamaId) || "0"}`;
}

/**
 * Adds a provisional registry record for every upstream list asset whose DefiLlama id the registry
 * does not know, so one new, well-formed coin never blocks publication. Pure: returns a new registry
 * (input untouched) and one manifest warning per added coin, in list order by llamaId.
 *
 * Each record: id `<slug(symbol)>-unreviewed-<llamaId>`, issuer `unreviewed`, provenance
 * `["unreviewed"]`, the list's name/symbol/pegType/pegMechanism (`unknown` when absent), peg currency
 * from the peg type, `navToken` false, `floatingPeg` for `peggedVAR`, no contracts, not dead, no risk facts. Its
 * CoinGecko id is kept only when no registry coin already uses it (a shared id would give it another
 * coin's prices and market caps). Assets that cannot form a valid record (e.g. a malformed peg type)
 * are skipped with a warning instead.
 */
export function withUnreviewedCoins(
  registry: Registry,
  listAssets: readonly ListAsset[],
): { registry: Registry; warnings: string[] } {
  const knownLlama = new Set(registry.coins.map((c) => c.llamaId).filter((x): x is string => x !== null));
  const knownGecko = new Set(registry.coins.map((c) => c.geckoId).filter((x): x is string => x !== null));
  const knownIds = new Set(registry.coins.map((c) => c.id));
  const added: Coin[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const a of [...listAssets].sort((x, y) => x.llamaId.localeCompare(y.llamaId, "en", { numeric: true }))) {
    if (knownLlama.has(a.llamaId) || seen.has(a.llamaId)) continue;
    seen.add(a.llamaId);
    const id = unreviewedCoinId(a.symbol, a.llamaId);
    const geckoId = a.geckoId && !knownGecko.has(a.geckoId) ? a.geckoId : null;
    const candidate = {
      id,
      llamaId: a.llamaId,
      geckoId,
      name: a.name,
      symbol: a.symbol,
      issuer: UNREVIEWED_ISSUER,
      pegType: a.pegType,
      pegCurrency: pegCurrencyOf(a.pegType),
      pegMechanism: a.pegMechanism ?? "unknown",
      navToken: false,
      floatingPeg: a.pegType === "peggedVAR",
      ...noChainOrArchiveRecords(),
      provenance: ["unreviewed" as const],
      risk: null,
      redemption: null,
      reserves: null,
    };
    const parsed = CoinSchema.safeParse(candidate);
    if (!parsed.success || knownIds.has(id)) {
      warnings.push(
        `unreviewed coin skipped: DefiLlama list asset ${a.llamaId} (${a.symbol}) cannot form a registry record (${parsed.success ? `id ${id} taken` : parsed.error.issues[0]?.path.join(".")})`,
      );
      continue;
    }
    knownIds.add(id);
    if (geckoId) knownGecko.add(geckoId);
    added.push(parsed.data);
    warnings.push(
      `unreviewed coin ${id}: DefiLlama list asset ${a.llamaId} (${a.symbol}, ${a.name}, ${a.pegType}) is not in the registry; published with a provisional id until reviewed`,
    );
  }
  return { registry: { ...registry, coins: [...registry.coins, ...added] }, warnings };
}
