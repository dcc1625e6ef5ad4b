import Papa from "papaparse";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { type Chain, type Coin, CoinSchema, type Registry, RegistrySchema } from "./schema.ts";

/**
 * Registry generation: a pure function from recorded metadata to the committed registry data
 * (`pipelines/registry/coins.json`, `chains.json`). Run by `tsx build/cli.ts registry`; a
 * contract test regenerates it and fails on drift, so ids are assigned once and stay put.
 *
 * Id rule (deterministic, documented in the README):
 *  1. the curated Pharos core id when its llamaId (or geckoId) matches;
 *  2. else the Pharos cemetery id when its llamaId matches;
 *  3. else `<slug(symbol)>-<slug(name without the symbol)>` (name slug alone when that leaves
 *     nothing); a collision with an id already taken appends `-<llamaId>`.
 */

const PEG_CURRENCY: Record<string, string> = { peggedREAL: "BRL" };

/** `peggedEUR` → `EUR`; `peggedREAL` → `BRL`. */
export function pegCurrencyOf(pegType: string): string {
  return PEG_CURRENCY[pegType] ?? pegType.replace(/^pegged/, "");
}

/** Lowercase ASCII slug: non-alphanumerics collapse to single hyphens. */
export function slug(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/** Canonical id candidate for a coin without a curated id (rule 3 above). */
export function deriveCoinId(symbol: string, name: string): string {
  const ticker = slug(symbol) || "coin";
  const nameWords = slug(name).split("-").filter(Boolean);
  const tickerWords = new Set(ticker.split("-"));
  const issuerWords = nameWords.filter((w) => !tickerWords.has(w));
  const issuer = issuerWords.length > 0 ? issuerWords.join("-") : nameWords.join("-") || "issuer";
  return `${ticker}-${issuer}`;
}

const CHAIN_ID_OVERRIDES: Record<string, string> = {
  "OP Mainnet": "optimism",
  "ZKsync Era": "zksync",
  "Hyperliquid L1": "hyperliquid",
  "World Chain": "worldchain",
  "X Layer": "xlayer",
  "Plume Mainnet": "plume",
  "Kaia": "klaytn",
  "Morph": "morph-l2",
};

/** Non-chain keys DefiLlama sometimes leaves in chain maps. */
export const NON_CHAIN_LABELS = new Set(["TotalCirculating"]);

/** Registry chain slug for a DefiLlama chain display label (`OP Mainnet` → `optimism`). */
export function chainIdForLabel(label: string): string {
  return CHAIN_ID_OVERRIDES[label] ?? slug(label);
}

const LooseAsset = z.looseObject({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  gecko_id: z.string().nullable().optional(),
  pegType: z.string(),
  pegMechanism: z.string().optional(),
  deadFrom: z.string().optional(),
  chainCirculating: z.record(z.string(), z.unknown()).optional(),
});
const CoreCoin = z.looseObject({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  llamaId: z.string().nullable().optional(),
  geckoId: z.string().nullable().optional(),
  pegMechanism: z.string().optional(),
  flags: z.looseObject({ pegCurrency: z.string().optional() }).optional(),
  contracts: z.array(z.object({ chain: z.string(), address: z.string(), decimals: z.number() })).optional(),
});
const CemeteryRow = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  llamaId: z.string(),
  pegCurrency: z.string(),
  causeOfDeath: z.string(),
  deathDate: z.string(),
});

/** Paths of the recorded inputs, relative to the capture dir. */
export const REGISTRY_INPUTS = {
  metadata: "defillama-peggedassets-server/peggedData.json",
  list: "zacheryglass-stablecoinwatch/defillama_raw_output.json",
  core: "pharos-watch/registry/coins.core.json",
  cemetery: "pharos-watch/datasets/stablecoin-cemetery.csv",
} as const;

/** Reads the recorded inputs and returns the registry. Throws when an input fails its schema. */
export function generateRegistry(captureDir: string): Registry {
  const read = (p: string) => readFileSync(join(captureDir, p), "utf8");
  const metadata = z.array(LooseAsset).parse(JSON.parse(read(REGISTRY_INPUTS.metadata)));
  const list = z.object({ peggedAssets: z.array(LooseAsset), chains: z.array(z.looseObject({ name: z.string() })) })
    .parse(JSON.parse(read(REGISTRY_INPUTS.list)));
  const core = z.array(CoreCoin).parse(JSON.parse(read(REGISTRY_INPUTS.core)));
  const cemeteryRows = Papa.parse<Record<string, string>>(read(REGISTRY_INPUTS.cemetery), { header: true, skipEmptyLines: true }).data;
  const cemetery = cemeteryRows.map((r) => CemeteryRow.parse(r));

  const coreByLlama = new Map(core.filter((c) => c.llamaId).map((c) => [c.llamaId!, c]));
  const coreByGecko = new Map(core.filter((c) => c.geckoId).map((c) => [c.geckoId!, c]));
  const cemByLlama = new Map(cemetery.filter((c) => c.llamaId).map((c) => [c.llamaId, c]));

  // Union of metadata and list by llamaId; metadata wins on fields, list fills gaps.
  const byLlama = new Map<string, z.infer<typeof LooseAsset> & { _prov: Set<Coin["provenance"][number]> }>();
  for (const a of metadata) byLlama.set(a.id, { ...a, _prov: new Set(["defillama-metadata"]) });
  for (const a of list.peggedAssets) {
    const prev = byLlama.get(a.id);
    if (prev) prev._prov.add("defillama-list");
    else byLlama.set(a.id, { ...a, _prov: new Set(["defillama-list"]) });
  }

  const taken = new Set<string>();
  const coins: Coin[] = [];
  const llamaIds = [...byLlama.keys()].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const usedCore = new Set<string>();
  // Curated ids are reserved first so a derived id can never steal one.
  for (const c of core) taken.add(c.id);
  for (const c of cemetery) taken.add(c.id);

  for (const llamaId of llamaIds) {
    const a = byLlama.get(llamaId)!;
    const cur = coreByLlama.get(llamaId) ?? (a.gecko_id ? coreByGecko.get(a.gecko_id) : undefined);
    const cem = cemByLlama.get(llamaId);
    let id: string;
    if (cur && !usedCore.has(cur.id)) { id = cur.id; usedCore.add(cur.id); }
    else if (cem) id = cem.id;
    else {
      id = deriveCoinId(a.symbol, a.name);
      if (taken.has(id)) id = `${id}-${llamaId}`;
      taken.add(id);
    }
    const prov = new Set(a._prov);
    if (cur && cur.id === id) prov.add("pharos-core");
    if (cem) prov.add("pharos-cemetery");
    coins.push(CoinSchema.parse({
      id,
      llamaId,
      geckoId: a.gecko_id ?? (cur?.geckoId ?? null),
      name: a.name,
      symbol: a.symbol,
      pegType: a.pegType,
      pegCurrency: cur?.flags?.pegCurrency ?? pegCurrencyOf(a.pegType),
      pegMechanism: a.pegMechanism ?? cur?.pegMechanism ?? "unknown",
      isDead: Boolean(a.deadFrom || cem),
      deadFrom: a.deadFrom ?? cem?.deathDate ?? null,
      causeOfDeath: cem?.causeOfDeath ?? null,
      contracts: cur && cur.id === id ? sortContracts(cur.contracts ?? []) : [],
      provenance: [...prov].sort(),
    }));
  }
  // Curated coins DefiLlama does not list (gold tokens).
  for (const c of core) {
    if (usedCore.has(c.id)) continue;
    const pegCurrency = c.flags?.pegCurrency ?? "USD";
    coins.push(CoinSchema.parse({
      id: c.id, llamaId: c.llamaId ?? null, geckoId: c.geckoId ?? null, name: c.name, symbol: c.symbol,
      pegType: `pegged${pegCurrency}`, pegCurrency, pegMechanism: c.pegMechanism ?? "unknown",
      isDead: false, deadFrom: null, causeOfDeath: null, contracts: sortContracts(c.contracts ?? []),
      provenance: ["pharos-core"],
    }));
  }
  // Dead coins known only to the cemetery.
  const haveIds = new Set(coins.map((c) => c.id));
  for (const c of cemetery) {
    if (haveIds.has(c.id)) continue;
    coins.push(CoinSchema.parse({
      id: c.id, llamaId: c.llamaId || null, geckoId: null, name: c.name, symbol: c.symbol,
      pegType: `pegged${c.pegCurrency}`, pegCurrency: c.pegCurrency, pegMechanism: "unknown",
      isDead: true, deadFrom: c.deathDate, causeOfDeath: c.causeOfDeath, contracts: [],
      provenance: ["pharos-cemetery"],
    }));
  }
  coins.sort((x, y) => x.id.localeCompare(y.id));

  const labels = new Set<string>();
  for (const c of list.chains) labels.add(c.name);
  for (const a of list.peggedAssets) for (const l of Object.keys(a.chainCirculating ?? {})) labels.add(l);
  const chains = new Map<string, Chain>();
  for (const label of [...labels].sort()) {
    if (NON_CHAIN_LABELS.has(label)) continue;
    const id = chainIdForLabel(label);
    if (!chains.has(id)) chains.set(id, { id, name: label });
  }
  return RegistrySchema.parse({ coins, chains: [...chains.values()].sort((a, b) => a.id.localeCompare(b.id)) });
}

function sortContracts(cs: { chain: string; address: string; decimals: number }[]) {
  return [...cs].sort((a, b) => a.chain.localeCompare(b.chain) || a.address.localeCompare(b.address));
}
