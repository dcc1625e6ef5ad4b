import { StablecoinsPayloadSchema, stablecoinsArtifact } from "../../../site-data/stablecoins.ts";
import type { ServingBuild } from "../published.ts";

/**
 * What the bot can follow: stablecoins of the serving build's list (`site-data/stablecoins.json`,
 * the `/api/stablecoins` payload) and a few presets. The API may not import the registry
 * (`pipelines/`), so the published list is the catalog: a coin the build lists can be followed, by its
 * stablecoin id (`usdt-tether`) or its symbol when exactly one reviewed coin has it. Coins the list
 * marks `unreviewed` are left out: their ids are provisional and change once reviewed.
 */

/** A followable coin: stablecoin id and symbol as the build publishes them. */
export interface CoinRef {
  id: string;
  symbol: string;
  name: string;
}

/** The followable coins of one build, by id and by upper-case symbol. `size` 0: no build (or no list) yet. */
export class CoinCatalog {
  private readonly byId = new Map<string, CoinRef>();
  private readonly bySymbol = new Map<string, CoinRef[]>();

  constructor(coins: readonly CoinRef[]) {
    for (const c of [...coins].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      this.byId.set(c.id, c);
      const key = c.symbol.toUpperCase();
      this.bySymbol.set(key, [...(this.bySymbol.get(key) ?? []), c]);
    }
  }

  get size(): number {
    return this.byId.size;
  }

  /** Every coin id, ascending. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  get(id: string): CoinRef | undefined {
    return this.byId.get(id);
  }

  /** Symbol of a coin id; the id itself when the catalog does not know it. */
  symbolOf(id: string): string {
    return this.byId.get(id)?.symbol ?? id;
  }

  /** Coins whose symbol is `symbol` (case-insensitive), ascending by id. */
  withSymbol(symbol: string): CoinRef[] {
    return this.bySymbol.get(symbol.toUpperCase()) ?? [];
  }
}

/** The empty catalog (no build published yet). */
export const EMPTY_CATALOG = new CoinCatalog([]);

/**
 * The catalog of a serving build, read once per build from its stablecoins list; the empty catalog
 * when there is no build, the build lacks the list, or the list fails its schema (the bot then answers
 * that the coin list is not available yet, and never guesses).
 */
export async function coinCatalog(build: ServingBuild | null): Promise<CoinCatalog> {
  if (!build) return EMPTY_CATALOG;
  return build.memo("telegram:coin-catalog", async () => {
    try {
      const list = await build.payload(stablecoinsArtifact.outputs.main.path, (x) => StablecoinsPayloadSchema.parse(x));
      if (!list) return EMPTY_CATALOG;
      return new CoinCatalog(
        list.peggedAssets
          .filter((c) => c.unreviewed !== true)
          .map((c) => ({ id: c.id, symbol: c.symbol, name: c.name })),
      );
    } catch {
      return EMPTY_CATALOG;
    }
  });
}

/** A preset: a named set of coins a chat follows in one go; `coins` `"*"` is every coin (present and future). */
export interface Preset {
  name: string;
  description: string;
  coins: readonly string[] | "*";
}

/**
 * The presets (small on purpose):
 * - `majors`: the largest USD stablecoins by supply (fixed list, reviewed when the market changes);
 * - `all`: every stablecoin, including coins listed later.
 * Following a preset implies its coins (FollowerLookup, the pulse's preset-implied subscriptions).
 */
export const PRESETS: readonly Preset[] = [
  {
    name: "majors",
    description: "The largest USD stablecoins: USDT, USDC, USDS, DAI, USDe, USD1, PYUSD, FDUSD",
    coins: [
      "usdt-tether",
      "usdc-circle",
      "usds-sky",
      "dai-sky",
      "usde-ethena",
      "usd1-world-liberty-financial",
      "pyusd-paypal",
      "fdusd-first-digital",
    ],
  },
  { name: "all", description: "Every stablecoin Ballast lists, including coins listed later", coins: "*" },
];

/** The preset named `name` (case-insensitive), or undefined. */
export function presetNamed(name: string): Preset | undefined {
  const n = name.toLowerCase();
  return PRESETS.find((p) => p.name === n);
}

/** The coins of preset `p` within `universe` (every coin of `universe` for `all`). */
export function presetCoins(p: Preset, universe: readonly string[]): string[] {
  if (p.coins === "*") return [...universe];
  const inUniverse = new Set(universe);
  return p.coins.filter((c) => inUniverse.has(c));
}

/** Parallel arrays (preset name, coin id) of every preset's coins within `universe`, for SQL `unnest`. */
export function presetPairs(universe: readonly string[]): { names: string[]; coins: string[] } {
  const names: string[] = [];
  const coins: string[] = [];
  for (const p of PRESETS)
    for (const c of presetCoins(p, universe)) {
      names.push(p.name);
      coins.push(c);
    }
  return { names, coins };
}

/** What a follow argument names. */
export type FollowTarget =
  | { kind: "preset"; preset: Preset }
  | { kind: "coin"; coin: CoinRef }
  | { kind: "ambiguous"; arg: string; candidates: CoinRef[] }
  | { kind: "unknown"; arg: string };

/**
 * Resolves one argument of `/follow` or `/unfollow`: a preset name, else a stablecoin id, else a
 * symbol matching exactly one coin (several: `ambiguous`, listing them; the caller asks for the id).
 */
export function resolveTarget(arg: string, catalog: CoinCatalog): FollowTarget {
  const preset = presetNamed(arg);
  if (preset) return { kind: "preset", preset };
  const coin = catalog.get(arg.toLowerCase());
  if (coin) return { kind: "coin", coin };
  const bySymbol = catalog.withSymbol(arg);
  if (bySymbol.length === 1) return { kind: "coin", coin: bySymbol[0] };
  if (bySymbol.length > 1) return { kind: "ambiguous", arg, candidates: bySymbol };
  return { kind: "unknown", arg };
}
