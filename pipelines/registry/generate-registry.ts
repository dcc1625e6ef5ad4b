import Papa from "papaparse";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { byId, type CuratedCoin, curatedProblems, loadCuratedCoins, pegCurrencyOf, slug } from "./curated.ts";
import { toEventSelector } from "viem";
import {
  type Chain,
  type CHAIN_TIERS,
  type Coin,
  CoinSchema,
  FamilyEventSchema,
  type Registry,
  ReserveRiskSchema,
  type TrackedContract,
} from "./schema.ts";
import { type ListAsset, withUnreviewedCoins } from "./unreviewed.ts";
import { parseRegistry } from "./registry.ts";
import { must } from "../../lib/must.ts";
import { PeggedAssetIdentity } from "../sources/defillama/defillama.ts";

export { pegCurrencyOf, slug, tickerSlug } from "./curated.ts";

/**
 * Registry generation: a pure function from the curated coin records
 * (`pipelines/registry/coins.curated.json`) and the recorded upstream metadata to the committed
 * registry (`pipelines/registry/registry.json`). Run by `tsx build/cli.ts registry`; a test
 * regenerates it and fails on drift.
 *
 * Curated records carry identity and judgement (id, ticker, issuer, peg, NAV / floating flags,
 * upstream ids, death date, risk facts: copied as is, null when not curated); upstream fills what it owns: the name (DefiLlama metadata, then list,
 * Pharos core, cemetery), contracts (Pharos core extract, plus curated ones), cause of death
 * (cemetery) and the chain list. Ids are never derived from names: see README.md in this folder.
 * A recorded DefiLlama coin without a curated record is still listed, as `unreviewed`
 * ({@link withUnreviewedCoins}: provisional id `<ticker>-unreviewed-<llamaId>`), so coverage never
 * silently drops; the committed registry has none.
 */

const CHAIN_ID_OVERRIDES: Record<string, string> = {
  "OP Mainnet": "optimism",
  "ZKsync Era": "zksync",
  "Hyperliquid L1": "hyperliquid",
  "World Chain": "worldchain",
  "X Layer": "xlayer",
  "Plume Mainnet": "plume",
  Kaia: "klaytn",
  Morph: "morph-l2",
};

/** Non-chain keys DefiLlama sometimes leaves in chain maps. */
export const NON_CHAIN_LABELS = new Set(["TotalCirculating"]);

/** Registry chain slug for a DefiLlama chain display label (`OP Mainnet` → `optimism`). */
export function chainIdForLabel(label: string): string {
  return CHAIN_ID_OVERRIDES[label] ?? slug(label);
}

/** A DefiLlama metadata or list record as the registry reads it: identity, dead date, chain labels. */
const LooseAsset = PeggedAssetIdentity.extend({
  deadFrom: z.string().optional(),
  chainCirculating: z.record(z.string(), z.unknown()).optional(),
});
type Asset = z.infer<typeof LooseAsset>;
const CoreCoin = z.looseObject({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  llamaId: z.string().nullable().optional(),
  geckoId: z.string().nullable().optional(),
  contracts: z.array(z.object({ chain: z.string(), address: z.string(), decimals: z.number() })).optional(),
  reserves: z.array(z.object({ name: z.string(), pct: z.number(), risk: z.string() })).optional(),
  _source: z.object({ path: z.string(), commit: z.string() }).optional(),
});
const CemeteryRow = z.object({
  id: z.string(),
  name: z.string(),
  symbol: z.string(),
  llamaId: z.string(),
  pegCurrency: z.string(),
  causeOfDeath: z.string(),
  deathDate: z.string(),
  peakMcapUsd: z
    .string()
    .transform((v) => (v.trim() === "" ? null : Number(v)))
    .pipe(z.number().positive().nullable())
    .optional(),
});

/** Paths of the recorded inputs, relative to the capture dir. */
export const REGISTRY_INPUTS = {
  metadata: "defillama-peggedassets-server/peggedData.json",
  list: "zacheryglass-stablecoinwatch/defillama_raw_output.json",
  core: "pharos-watch/registry/coins.core.json",
  cemetery: "pharos-watch/datasets/stablecoin-cemetery.csv",
  trackedContracts: "pharos-watch/blacklist/tracked-contracts.json",
} as const;

const TrackedEvent = z.object({
  signature: z.string(),
  topicHash: z.string(),
  eventType: z.enum(["blacklist", "unblacklist", "destroy"]),
  hasAmount: z.boolean(),
  addressTopicIndex: z.number().optional(),
  addressDataIndex: z.number().optional(),
  addressArrayData: z.boolean().optional(),
  amountTopicIndex: z.number().optional(),
  amountDataIndex: z.number().optional(),
  tronResultKey: z.string().optional(),
  amountNote: z.string().optional(),
});
const TrackedContracts = z.object({
  eventFamilies: z.record(z.string(), z.array(TrackedEvent)),
  trackedContracts: z.array(
    z.object({
      chain: z.string(),
      evmChainId: z.number().nullable().optional(),
      stablecoinId: z.string(),
      contractSource: z.enum(["primary", "traded"]),
      contractAddress: z.string().nullable(),
      decimals: z.number().nullable(),
      startBlock: z.number().nullable(),
      eventFamily: z.string(),
    }),
  ),
});

/**
 * Known bridge contracts (curated): supply a bridge mints or burns moves between chains, it is not
 * issuance. Circle CCTP's TokenMinter burns USDC on the source chain and mints it on the target one.
 */
const KNOWN_BRIDGES: Registry["bridges"] = [
  { chain: "ethereum", address: "0xc4922d64a24675e16e1586e3e3aa56c06fabe907", name: "Circle CCTP TokenMinter" },
];

const L2BEAT = {
  label: "L2BEAT scaling summary (stage 1 rollups: Arbitrum One, OP Mainnet, Base)",
  url: "https://l2beat.com/scaling/summary",
};
const TIER_VOCABULARY = (what: string) => ({
  label: `Ballast curated chain tier: ${what} (chainTier vocabulary of pipelines/registry/schema.ts)`,
  url: null,
});

/**
 * Curated chain tiers (chain health `chainEnvironment`; we hold no L2BEAT snapshot): Ethereum itself;
 * rollups at L2BEAT stage 1; `mature-alt-l1` for the large L1s long in production that the registry's
 * `chainTier` vocabulary names (Tron, BNB Chain, Solana, Avalanche, Stellar, XRPL); `established-alt-l1`
 * for the younger or smaller L1s it names (Gnosis, Sui). Every other chain has no tier (not guessed).
 */
export const CURATED_CHAIN_TIERS: Record<
  string,
  { tier: (typeof CHAIN_TIERS)[number]; tierSource: { label: string; url: string | null } }
> = {
  ethereum: {
    tier: "ethereum",
    tierSource: { label: "Ethereum mainnet (reference settlement layer)", url: "https://ethereum.org/" },
  },
  arbitrum: { tier: "stage1-l2", tierSource: L2BEAT },
  base: { tier: "stage1-l2", tierSource: L2BEAT },
  optimism: { tier: "stage1-l2", tierSource: L2BEAT },
  avalanche: { tier: "mature-alt-l1", tierSource: TIER_VOCABULARY("mature alt-L1") },
  bsc: { tier: "mature-alt-l1", tierSource: TIER_VOCABULARY("mature alt-L1") },
  solana: { tier: "mature-alt-l1", tierSource: TIER_VOCABULARY("mature alt-L1") },
  stellar: { tier: "mature-alt-l1", tierSource: TIER_VOCABULARY("mature alt-L1") },
  tron: { tier: "mature-alt-l1", tierSource: TIER_VOCABULARY("mature alt-L1") },
  xrpl: { tier: "mature-alt-l1", tierSource: TIER_VOCABULARY("mature alt-L1") },
  gnosis: { tier: "established-alt-l1", tierSource: TIER_VOCABULARY("established alt-L1") },
  sui: { tier: "established-alt-l1", tierSource: TIER_VOCABULARY("established alt-L1") },
};

/** Pharos ids of tracked-contracts coins absent from its core extract → our id. */
const TRACKED_ID_ALIASES: Record<string, string> = { "tgbp-tokenised": "tgbp-bcp-technologies" };

/**
 * Supply (mint/burn) event families, curated: ERC-20 `Transfer` from/to the zero address, the legacy
 * Tether `Issue`/`Redeem` (amount only; the owner receives/pays), Paxos `SupplyIncreased`/`SupplyDecreased`
 * (Paxos contracts also emit `Transfer` from/to zero for the same supply change, so only one family is
 * tracked per contract). Topics are computed with keccak256 at generation time.
 */
const SUPPLY_FAMILIES: Record<
  string,
  { signature: string; kind: "mint" | "burn" | "transfer"; addressTopicIndex?: number; amountDataIndex: number }[]
> = {
  "erc20-supply": [{ signature: "Transfer(address,address,uint256)", kind: "transfer", amountDataIndex: 0 }],
  "tether-supply": [
    { signature: "Issue(uint256)", kind: "mint", amountDataIndex: 0 },
    { signature: "Redeem(uint256)", kind: "burn", amountDataIndex: 0 },
  ],
  "paxos-supply": [
    { signature: "SupplyIncreased(address,uint256)", kind: "mint", addressTopicIndex: 1, amountDataIndex: 0 },
    { signature: "SupplyDecreased(address,uint256)", kind: "burn", addressTopicIndex: 1, amountDataIndex: 0 },
  ],
};

/**
 * Event families of the registry: the tracked-contracts freeze families (topic hashes re-checked
 * with keccak256: a mismatch throws) and the curated supply families.
 */
export function eventFamilies(tracked: z.infer<typeof TrackedContracts>): Registry["eventFamilies"] {
  const out: Registry["eventFamilies"] = {};
  for (const [key, events] of Object.entries(tracked.eventFamilies).sort(([a], [b]) => a.localeCompare(b))) {
    out[key] = events.map(({ topicHash, eventType, ...e }) => {
      const topic0 = toEventSelector(e.signature);
      if (topic0 !== topicHash.toLowerCase())
        throw new Error(
          `tracked-contracts family ${key}: ${e.signature} topic ${topicHash} is not keccak256 ${topic0}`,
        );
      return FamilyEventSchema.parse({ ...e, topic0, kind: eventType });
    });
  }
  for (const [key, events] of Object.entries(SUPPLY_FAMILIES)) {
    out[key] = events.map((e) =>
      FamilyEventSchema.parse({ ...e, topic0: toEventSelector(e.signature), hasAmount: true }),
    );
  }
  return out;
}

/** The recorded upstream inputs of the registry, parsed. */
export interface RegistryInputs {
  metadata: Asset[];
  list: { peggedAssets: Asset[]; chains: { name: string }[] };
  core: z.infer<typeof CoreCoin>[];
  cemetery: z.infer<typeof CemeteryRow>[];
  trackedContracts: z.infer<typeof TrackedContracts>;
}

/** Reads and validates the recorded upstream inputs from the capture dir. Throws on schema failure. */
export function readRegistryInputs(captureDir: string): RegistryInputs {
  const read = (p: string) => readFileSync(join(captureDir, p), "utf8");
  const rows = Papa.parse<Record<string, string>>(read(REGISTRY_INPUTS.cemetery), {
    header: true,
    skipEmptyLines: true,
  }).data;
  return {
    metadata: z.array(LooseAsset).parse(JSON.parse(read(REGISTRY_INPUTS.metadata))),
    list: z
      .object({ peggedAssets: z.array(LooseAsset), chains: z.array(z.looseObject({ name: z.string() })) })
      .parse(JSON.parse(read(REGISTRY_INPUTS.list))),
    core: z.array(CoreCoin).parse(JSON.parse(read(REGISTRY_INPUTS.core))),
    cemetery: rows.map((r) => CemeteryRow.parse(r)),
    trackedContracts: TrackedContracts.parse(JSON.parse(read(REGISTRY_INPUTS.trackedContracts))),
  };
}

/**
 * Merges the curated records with the recorded inputs into the registry. Throws when a curated
 * record breaks an invariant ({@link curatedProblems}) or a merged record fails `CoinSchema`.
 */
export function buildRegistry(curated: CuratedCoin[], inputs: RegistryInputs): Registry {
  const problems = curatedProblems(curated);
  if (problems.length > 0) throw new Error(`curated registry: ${problems.join("; ")}`);
  const meta = new Map(inputs.metadata.map((a) => [a.id, a]));
  const listed = new Map(inputs.list.peggedAssets.map((a) => [a.id, a]));
  const coreById = new Map(inputs.core.map((c) => [c.id, c]));
  const cemById = new Map(inputs.cemetery.map((c) => [c.id, c]));
  const families = eventFamilies(inputs.trackedContracts);
  // Tracked-contracts names coins by Pharos id: our record with that pharosId, else an alias, else the same id.
  const ourId = (pharos: string) =>
    curated.find((c) => c.pharosId === pharos)?.id ??
    curated.find((c) => c.id === (TRACKED_ID_ALIASES[pharos] ?? pharos))?.id;
  const unknownTracked = [...new Set(inputs.trackedContracts.trackedContracts.map((t) => t.stablecoinId))].filter(
    (id) => !ourId(id),
  );
  if (unknownTracked.length) throw new Error(`tracked-contracts: unknown stablecoin ids ${unknownTracked.join(", ")}`);
  const trackedBy = new Map<string, TrackedContract[]>();
  for (const t of inputs.trackedContracts.trackedContracts) {
    const id = must(ourId(t.stablecoinId), `registry id of tracked coin ${t.stablecoinId}`); // unknown ids were refused above
    const list = trackedBy.get(id) ?? [];
    list.push({
      chain: t.chain,
      evmChainId: t.evmChainId ?? null,
      address: t.chain === "tron" || !t.contractAddress ? t.contractAddress : t.contractAddress.toLowerCase(),
      decimals: t.decimals,
      startBlock: t.startBlock,
      family: t.eventFamily,
      contractSource: t.contractSource,
    });
    trackedBy.set(id, list);
  }

  const coins: Coin[] = curated.map((rec) => {
    const m = rec.llamaId ? meta.get(rec.llamaId) : undefined;
    const l = rec.llamaId ? listed.get(rec.llamaId) : undefined;
    const core = rec.pharosId ? coreById.get(rec.pharosId) : undefined;
    const cem = rec.pharosId ? cemById.get(rec.pharosId) : undefined;
    const provenance: Coin["provenance"] = ["curated"];
    if (m) provenance.push("defillama-metadata");
    if (l) provenance.push("defillama-list");
    if (core) provenance.push("pharos-core");
    if (cem) provenance.push("pharos-cemetery");
    return CoinSchema.parse({
      id: rec.id,
      llamaId: rec.llamaId,
      geckoId: rec.geckoId,
      name: rec.name ?? m?.name ?? l?.name ?? core?.name ?? cem?.name ?? rec.symbol,
      symbol: rec.symbol,
      issuer: rec.issuer,
      pegType: rec.pegType,
      pegCurrency: rec.floatingPeg ? "VAR" : pegCurrencyOf(rec.pegType),
      pegMechanism: rec.pegMechanism,
      navToken: rec.navToken === true,
      floatingPeg: rec.floatingPeg === true,
      exchangeSymbols: rec.exchangeSymbols ?? [],
      archiveNames: rec.archiveNames ?? [],
      deadFrom: rec.deadFrom ?? null,
      causeOfDeath: cem?.causeOfDeath ?? null,
      ...(cem?.peakMcapUsd ? { peakMcapUsd: cem.peakMcapUsd } : {}),
      contracts: sortContracts([...(rec.contracts ?? []), ...(core?.contracts ?? [])]),
      freezeContracts: sortTracked([...(trackedBy.get(rec.id) ?? []), ...(rec.freezeContracts ?? [])], families),
      supplyContracts: sortTracked(rec.supplyContracts ?? [], families),
      provenance: provenance.sort(),
      risk: rec.risk ?? null,
      redemption: rec.redemption ?? null,
      reserves: reserveComposition(core),
    });
  });

  // Upstream coins nobody has curated: listed with a provisional id, flagged `unreviewed`.
  const curatedLlama = new Set(curated.map((c) => c.llamaId).filter(Boolean));
  const uncurated: ListAsset[] = [...new Set([...meta.keys(), ...listed.keys()])]
    .filter((id) => !curatedLlama.has(id))
    .map((id) => {
      const a = must(meta.get(id) ?? listed.get(id), `upstream asset ${id}`);
      return {
        llamaId: id,
        name: a.name,
        symbol: a.symbol,
        geckoId: a.gecko_id ?? null,
        pegType: a.pegType,
        pegMechanism: a.pegMechanism ?? null,
      };
    });
  coins.push(
    ...withUnreviewedCoins({ coins, chains: [], bridges: [], eventFamilies: families }, uncurated).registry.coins.slice(
      coins.length,
    ),
  );
  coins.sort(byId);

  const labels = new Set<string>();
  for (const c of inputs.list.chains) labels.add(c.name);
  for (const a of inputs.list.peggedAssets) for (const l of Object.keys(a.chainCirculating ?? {})) labels.add(l);
  const chains = new Map<string, Chain>();
  for (const label of [...labels].sort()) {
    if (NON_CHAIN_LABELS.has(label)) continue;
    const id = chainIdForLabel(label);
    if (!chains.has(id)) chains.set(id, { id, name: label, ...(CURATED_CHAIN_TIERS[id] ?? {}) });
  }
  return parseRegistry(
    {
      coins,
      chains: [...chains.values()].sort((a, b) => a.id.localeCompare(b.id)),
      bridges: KNOWN_BRIDGES,
      eventFamilies: families,
    },
    "generated registry",
  );
}

/** Reads the recorded inputs and the committed curated records and returns the registry. */
export function generateRegistry(captureDir: string, curated: CuratedCoin[] = loadCuratedCoins()): Registry {
  return buildRegistry(curated, readRegistryInputs(captureDir));
}

/**
 * The Pharos core extract's reserve composition of a coin with its citation (label
 * `pharos-core <path>@<commit>`, the file at its commit), null when the extract has none.
 */
export function reserveComposition(core: z.infer<typeof CoreCoin> | undefined): Coin["reserves"] {
  if (!core?.reserves?.length || !core._source) return null;
  const { path, commit } = core._source;
  return {
    components: core.reserves.map((r) => ({ name: r.name, pct: r.pct, risk: ReserveRiskSchema.parse(r.risk) })),
    source: {
      label: `pharos-core ${path}@${commit}`,
      url: `https://github.com/TokenBrice/pharos-watch/blob/${commit}/${path}`,
    },
  };
}

/** Tracked contracts sorted by chain, family, address; throws on a family the registry does not define. */
function sortTracked(cs: TrackedContract[], families: Registry["eventFamilies"]): TrackedContract[] {
  for (const c of cs)
    if (!families[c.family])
      throw new Error(`tracked contract ${c.chain} ${c.address}: unknown event family ${c.family}`);
  return [...cs].sort(
    (a, b) =>
      a.chain.localeCompare(b.chain) ||
      a.family.localeCompare(b.family) ||
      String(a.address).localeCompare(String(b.address)),
  );
}

/** Deployments sorted by chain then address, duplicates (same chain and address) dropped. */
function sortContracts(cs: { chain: string; address: string; decimals: number }[]) {
  const seen = new Set<string>();
  return [...cs]
    .sort((a, b) => a.chain.localeCompare(b.chain) || a.address.localeCompare(b.address))
    .filter((c) => {
      const key = `${c.chain}:${c.address.toLowerCase()}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}
