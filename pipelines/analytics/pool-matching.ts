import type { Analytic, Row } from "./contract.ts";

/**
 * Pool → coin matching (`pool_coin_matches`): which tracked stablecoin each token of a DefiLlama
 * yields pool is. Pure functions plus one marts-layer DAG node over `yield_pools`. Nothing is guessed:
 * a token is matched only when exactly one registry coin can be it, otherwise it is recorded as
 * unmatched with its reason and the candidate ids.
 *
 * - **By address** (`match_method = 'address'`), when the pool lists `underlyingTokens`: each address
 *   is matched to the registry coin with that contract on the pool's chain (case-insensitive). An
 *   address that is no registry contract there is `no-stablecoin-token` (a look-alike or bridged
 *   token with the same symbol is not the coin). Coverage is the registry's curated `contracts`.
 * - **By symbol within the chain** (`match_method = 'symbol-chain'`), when the pool gives no
 *   addresses (the recorded open-defi-data sample): the pool symbol is split on `-` and `/`; each
 *   token is compared with registry coin symbols (case-insensitive: `SUSDS` = `sUSDS`) among coins
 *   not dead at as-of. A coin is ruled out when it has deployment evidence (a registry contract, or
 *   supply on a chain in the DefiLlama list/detail history up to as-of) and none on the pool's
 *   chain; a coin without any evidence stays a candidate (we cannot rule it out). Exactly one
 *   candidate → matched (`chain_evidence` says which evidence placed it there: `contract`,
 *   `chain-supply` or `none`); several → `ambiguous-symbol`; none left → `not-on-chain` (candidates:
 *   the coins with that symbol); no coin has the symbol → `unknown-symbol` when DefiLlama flags the
 *   pool a stablecoin pool, else `no-stablecoin-token`.
 * One row per pool token (a `USDC-USDT` pool gives two rows).
 */

export type MatchMethod = "address" | "symbol-chain";
export type UnmatchedReason = "ambiguous-symbol" | "unknown-symbol" | "not-on-chain" | "no-stablecoin-token";
export type ChainEvidence = "contract" | "chain-supply" | "none";

/** A registry coin as matching sees it. `contracts` are `{chain, address}`; `supplyChains` the chains it had supply on. */
export interface MatchCoin {
  id: string;
  symbol: string;
  contracts: { chain: string; address: string }[];
  supplyChains: string[];
}

/** Lookup tables over live registry coins. */
export interface CoinIndex {
  bySymbol: Map<string, MatchCoin[]>;
  /** `<chain>|<lower-case address>` → coin id. */
  byAddress: Map<string, string>;
}

/** A pool as matching sees it: registry chain id, upstream symbol, stablecoin flag, token addresses (null when not given). */
export interface MatchPool {
  poolId: string;
  chain: string;
  symbol: string;
  isStablecoin: boolean;
  underlyingTokens: string[] | null;
}

/** One token of a pool and what it matched. */
export interface PoolTokenMatch {
  poolId: string;
  tokenIndex: number;
  token: string;
  chain: string;
  stablecoinId: string | null;
  matchMethod: MatchMethod;
  unmatchedReason: UnmatchedReason | null;
  candidateIds: string[];
  chainEvidence: ChainEvidence | null;
}

const symKey = (s: string) => s.trim().toUpperCase();

/** Index of coins by upper-cased symbol and by `<chain>|<address>`. */
export function buildCoinIndex(coins: MatchCoin[]): CoinIndex {
  const bySymbol = new Map<string, MatchCoin[]>();
  const byAddress = new Map<string, string>();
  for (const c of [...coins].sort((a, b) => a.id.localeCompare(b.id))) {
    const k = symKey(c.symbol);
    bySymbol.set(k, [...(bySymbol.get(k) ?? []), c]);
    for (const d of c.contracts) byAddress.set(`${d.chain}|${d.address.toLowerCase()}`, c.id);
  }
  return { bySymbol, byAddress };
}

/** Tokens of a pool symbol: split on `-` and `/`, trimmed, empties dropped (`USDC-USDT` → [USDC, USDT]). */
export function poolTokens(symbol: string): string[] {
  return symbol
    .split(/[-/]/)
    .map((t) => t.trim())
    .filter(Boolean);
}

function evidenceOn(c: MatchCoin, chain: string): ChainEvidence | "elsewhere" {
  if (c.contracts.some((d) => d.chain === chain)) return "contract";
  if (c.supplyChains.includes(chain)) return "chain-supply";
  return c.contracts.length === 0 && c.supplyChains.length === 0 ? "none" : "elsewhere";
}

/** Match rows of one pool (see the module doc for the rules). */
export function matchPool(pool: MatchPool, index: CoinIndex): PoolTokenMatch[] {
  const base = { poolId: pool.poolId, chain: pool.chain };
  if (pool.underlyingTokens && pool.underlyingTokens.length > 0) {
    return pool.underlyingTokens.map((address, tokenIndex) => {
      const id = index.byAddress.get(`${pool.chain}|${address.toLowerCase()}`) ?? null;
      return {
        ...base,
        tokenIndex,
        token: address,
        stablecoinId: id,
        matchMethod: "address" as const,
        unmatchedReason: id ? null : ("no-stablecoin-token" as const),
        candidateIds: [],
        chainEvidence: id ? ("contract" as const) : null,
      };
    });
  }
  return poolTokens(pool.symbol).map((token, tokenIndex) => {
    const coins = index.bySymbol.get(symKey(token)) ?? [];
    const row = { ...base, tokenIndex, token, matchMethod: "symbol-chain" as const };
    if (coins.length === 0) {
      return {
        ...row,
        stablecoinId: null,
        unmatchedReason: pool.isStablecoin ? ("unknown-symbol" as const) : ("no-stablecoin-token" as const),
        candidateIds: [],
        chainEvidence: null,
      };
    }
    const placed = coins.map((c) => ({ c, ev: evidenceOn(c, pool.chain) })).filter((x) => x.ev !== "elsewhere");
    if (placed.length === 1) {
      return {
        ...row,
        stablecoinId: placed[0].c.id,
        unmatchedReason: null,
        candidateIds: [placed[0].c.id],
        chainEvidence: placed[0].ev as ChainEvidence,
      };
    }
    if (placed.length === 0)
      return {
        ...row,
        stablecoinId: null,
        unmatchedReason: "not-on-chain" as const,
        candidateIds: coins.map((c) => c.id),
        chainEvidence: null,
      };
    return {
      ...row,
      stablecoinId: null,
      unmatchedReason: "ambiguous-symbol" as const,
      candidateIds: placed.map((x) => x.c.id),
      chainEvidence: null,
    };
  });
}

/** Coins for matching from `registry_coins` rows (live at as-of) and `(stablecoin_id, chain_id)` supply rows. */
export function matchCoinsFrom(coins: Row[], supplyChains: Row[]): MatchCoin[] {
  const chainsOf = new Map<string, string[]>();
  for (const r of supplyChains) {
    const id = String(r.stablecoin_id);
    chainsOf.set(id, [...(chainsOf.get(id) ?? []), String(r.chain_id)]);
  }
  return coins.map((c) => ({
    id: String(c.id),
    symbol: String(c.symbol),
    contracts: (JSON.parse(String(c.contracts_json ?? "[]")) as { chain: string; address: string }[]).map((d) => ({
      chain: d.chain,
      address: d.address,
    })),
    supplyChains: chainsOf.get(String(c.id)) ?? [],
  }));
}

/** A pool row of `yield_pools` / `int_yield_pools_daily` → MatchPool. */
export function matchPoolFrom(r: Row): MatchPool {
  return {
    poolId: String(r.pool_id),
    chain: String(r.chain),
    symbol: String(r.symbol),
    isStablecoin: Boolean(r.is_stablecoin),
    underlyingTokens: r.underlying_tokens_json ? (JSON.parse(String(r.underlying_tokens_json)) as string[]) : null,
  };
}

/**
 * SQL inputs shared by the analytics that match pools: live registry coins and their supply chains up to
 * as-of: chains with a positive per-chain amount, plus the chains the newest DefiLlama list names for the
 * coin (`chains`), for lists without per-chain amounts (the 2026-09-02 list carries names only).
 */
export const MATCH_INPUTS = {
  coins: "select id, symbol, contracts_json from registry_coins where not is_dead order by id",
  supplyChains: `select distinct stablecoin_id, chain_id from (
          select stablecoin_id, chain_id from int_chain_supply_points where native > 0
          union all
          select coins.id as stablecoin_id, chains.id as chain_id
          from stg_defillama__assets assets
          cross join unnest(from_json(coalesce(assets.chains_json, '[]'), '["VARCHAR"]')) as listed(label)
          inner join registry_coins coins on coins.llama_id = assets.llama_id
          inner join registry_chains chains on chains.name = listed.label
        ) order by stablecoin_id, chain_id`,
};

/** DAG node: `pool_coin_matches`, one row per token of every pool of `yield_pools`. */
export const poolCoinMatchesAnalytic: Analytic = {
  name: "pool_coin_matches",
  layer: "marts",
  inputs: {
    ...MATCH_INPUTS,
    pools: "select pool_id, chain, symbol, is_stablecoin, underlying_tokens_json from yield_pools order by pool_id",
  },
  outputs: {
    pool_coin_matches: {
      pool_id: "VARCHAR",
      token_index: "BIGINT",
      token: "VARCHAR",
      chain: "VARCHAR",
      stablecoin_id: "VARCHAR",
      match_method: "VARCHAR",
      unmatched_reason: "VARCHAR",
      candidate_ids: "VARCHAR",
      chain_evidence: "VARCHAR",
    },
  },
  run(inputs) {
    const index = buildCoinIndex(matchCoinsFrom(inputs.coins, inputs.supplyChains));
    const rows: Row[] = [];
    for (const p of inputs.pools) {
      for (const m of matchPool(matchPoolFrom(p), index)) {
        rows.push({
          pool_id: m.poolId,
          token_index: m.tokenIndex,
          token: m.token,
          chain: m.chain,
          stablecoin_id: m.stablecoinId,
          match_method: m.matchMethod,
          unmatched_reason: m.unmatchedReason,
          candidate_ids: m.candidateIds.length ? m.candidateIds.join(",") : null,
          chain_evidence: m.chainEvidence,
        });
      }
    }
    return { tables: { pool_coin_matches: rows } };
  },
};
