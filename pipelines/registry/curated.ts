import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  ContractDeploymentSchema,
  RedemptionFactsSchema,
  RiskFactsSchema,
  StablecoinIdSchema,
  TrackedContractSchema,
} from "./schema.ts";

/**
 * The curated coin records (`pipelines/registry/coins.curated.json`): one record per coin, the
 * source of truth for every fact the registry does not take from upstream. See README.md in this
 * folder for the layout and the id rule.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
/** Path of the committed curated records. */
export const CURATED_PATH = join(HERE, "coins.curated.json");

/** Lowercase ASCII slug: apostrophes dropped, other non-alphanumerics collapse to single hyphens. */
export function slug(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/['\u2019]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

const PEG_CURRENCY: Record<string, string> = { peggedREAL: "BRL" };

/** `peggedEUR` → `EUR`; `peggedREAL` → `BRL`. */
export function pegCurrencyOf(pegType: string): string {
  return PEG_CURRENCY[pegType] ?? pegType.replace(/^pegged/, "");
}

/**
 * Slug of a ticker: like {@link slug}, but the tether sign `₮` reads `t` (`USD₮0` → `usdt0`) and a
 * `+` reads `plus` (`USD+` → `usdplus`), so a ticker keeps the letters that tell it apart.
 */
export function tickerSlug(symbol: string): string {
  return slug(symbol.replace(/\u20ae/g, "T").replace(/\+/g, "plus"));
}

/**
 * Canonical stablecoin id (spec 2.1): `<tickerSlug(symbol)>-<slug(issuer)>`, plus `-<slug(variant)>`
 * when two distinct coins share ticker and issuer: the coin whose upstream name carries a version
 * word (`Legacy BOLD`, `eUSD (V2)`, `DYAD v1`) takes it (`legacy`, `v2`, `v1`); the other keeps the
 * plain id.
 */
export function coinIdFor(symbol: string, issuer: string, variant?: string | null): string {
  const parts = [tickerSlug(symbol), slug(issuer), variant ? slug(variant) : ""].filter(Boolean);
  return parts.join("-");
}

const DeadFromSchema = z.string().regex(/^\d{4}(-\d{2}(-\d{2})?)?$/);

/**
 * One curated coin. Required: the identity (id, ticker, issuer), the peg (type and mechanism) and
 * the upstream ids (null when the upstream does not list the coin). Optional fields default to
 * "not set" and are omitted from the file when at their default.
 */
export const CuratedCoinSchema = z.strictObject({
  /** `<ticker>-<issuer>[-<variant>]`, checked against {@link coinIdFor}. */
  id: StablecoinIdSchema,
  /** Ticker as the issuer writes it (`crvUSD`, `USD+`). */
  symbol: z.string().min(1),
  /** Issuer or protocol display name (`Circle`, `Inverse Finance`, `Tron DAO Reserve`). */
  issuer: z.string().min(1),
  /** Word that tells two coins of one ticker and issuer apart (`v2`, `legacy`); see {@link coinIdFor}. */
  variant: z.string().min(1).optional(),
  /** Display-name override; by default the name comes from upstream (DefiLlama, then Pharos). */
  name: z.string().min(1).optional(),
  /** DefiLlama peg type key (`peggedUSD`, `peggedEUR`, `peggedXAU`, `peggedVAR`). */
  pegType: z.string().regex(/^pegged[A-Z]+$/),
  /** `fiat-backed`, `crypto-backed`, `algorithmic`, `commodity-backed` or `unknown`. */
  pegMechanism: z.string().min(1),
  /** Price follows a rising NAV (accruing yield), not par. */
  navToken: z.literal(true).optional(),
  /** Target moves (index, redemption rate); pegType is then `peggedVAR`. */
  floatingPeg: z.literal(true).optional(),
  /** DefiLlama stablecoin id. */
  llamaId: z.string().regex(/^\d+$/).nullable(),
  /** CoinGecko coin id. */
  geckoId: z.string().min(1).nullable(),
  /** Pharos id (core extract or cemetery) of the same coin: the join key to those inputs. */
  pharosId: z.string().min(1).optional(),
  /** Symbols on exchanges we read (Binance base asset). */
  exchangeSymbols: z.array(z.string().min(1)).optional(),
  /** Names in recorded archives (CoinGecko market-cap scrape `coin_name`). */
  archiveNames: z.array(z.string().min(1)).optional(),
  /** Curated deployments beyond the Pharos core extract's. */
  contracts: z.array(ContractDeploymentSchema).optional(),
  /** Curated freeze contracts beyond the tracked-contracts config's (same shape). */
  freezeContracts: z.array(TrackedContractSchema).optional(),
  /** Token contracts whose mint/burn events are tracked (family `erc20-supply`, `tether-supply`, `paxos-supply`). */
  supplyContracts: z.array(TrackedContractSchema).optional(),
  /** Death date: `YYYY-MM-DD`, `YYYY-MM` or `YYYY`. */
  deadFrom: DeadFromSchema.optional(),
  /** Curated risk facts with their sources ({@link RiskFactsSchema}); omitted when not curated (graded `NR`). */
  risk: RiskFactsSchema.optional(),
  /** Curated redemption route facts with their sources ({@link RedemptionFactsSchema}); omitted when the route is not known with confidence. */
  redemption: RedemptionFactsSchema.optional(),
});
export type CuratedCoin = z.infer<typeof CuratedCoinSchema>;

/**
 * Checks the invariants a list of curated records must hold: ids follow {@link coinIdFor}, and
 * ids, llamaIds, geckoIds and pharosIds are unique; floating pegs are `peggedVAR`; records are
 * sorted by id; risk dependencies name other registry coins and form no cycle. Returns the problems
 * found (empty when valid), each starting with the coin id.
 */
export function curatedProblems(records: CuratedCoin[]): string[] {
  const problems: string[] = [];
  const seen = {
    id: new Map<string, string>(),
    llamaId: new Map<string, string>(),
    geckoId: new Map<string, string>(),
    pharosId: new Map<string, string>(),
  };
  let prev = "";
  for (const r of records) {
    const expected = coinIdFor(r.symbol, r.issuer, r.variant);
    if (r.id !== expected)
      problems.push(
        `${r.id}: id must be ${expected} (ticker ${r.symbol}, issuer ${r.issuer}${r.variant ? `, variant ${r.variant}` : ""})`,
      );
    if (r.id <= prev) problems.push(`${r.id}: records must be sorted by id, unique (after ${prev})`);
    prev = r.id;
    for (const key of ["id", "llamaId", "geckoId", "pharosId"] as const) {
      const v = r[key];
      if (v == null) continue;
      const other = seen[key].get(v);
      if (other) problems.push(`${r.id}: ${key} ${v} already used by ${other}`);
      else seen[key].set(v, r.id);
    }
    if (r.floatingPeg && r.pegType !== "peggedVAR") problems.push(`${r.id}: floating peg must have pegType peggedVAR`);
    if (r.navToken && r.floatingPeg) problems.push(`${r.id}: a coin is a NAV token or a floating peg, not both`);
  }
  problems.push(...riskDependencyProblems(records));
  return problems;
}

/**
 * Risk dependency checks across records: every `risk.dependencies[i].id` is another registry coin,
 * and the dependency graph has no cycle (grades are computed upstream first).
 */
function riskDependencyProblems(records: CuratedCoin[]): string[] {
  const problems: string[] = [];
  const ids = new Set(records.map((r) => r.id));
  const deps = new Map<string, string[]>();
  for (const r of records) {
    for (const [i, d] of (r.risk?.dependencies ?? []).entries()) {
      if (d.id === r.id) problems.push(`${r.id}: risk.dependencies.${i}.id: a coin cannot depend on itself`);
      else if (!ids.has(d.id)) problems.push(`${r.id}: risk.dependencies.${i}.id: unknown registry coin ${d.id}`);
    }
    deps.set(
      r.id,
      (r.risk?.dependencies ?? []).map((d) => d.id).filter((id) => ids.has(id) && id !== r.id),
    );
  }
  const state = new Map<string, "open" | "done">();
  const visit = (id: string, path: string[]): void => {
    if (state.get(id) === "done") return;
    if (state.get(id) === "open") {
      problems.push(`${id}: risk.dependencies: cycle ${[...path.slice(path.indexOf(id)), id].join(" → ")}`);
      return;
    }
    state.set(id, "open");
    for (const up of deps.get(id) ?? []) visit(up, [...path, id]);
    state.set(id, "done");
  };
  for (const id of [...deps.keys()].sort()) visit(id, []);
  return problems;
}

/**
 * Schema problems of a list of records, one line per issue, naming the record (`<id>: risk.custodyModel: …`;
 * `#<index>` when the record has no usable id).
 */
export function schemaProblems(records: unknown[], schema: z.ZodType): string[] {
  const problems: string[] = [];
  for (const [i, rec] of records.entries()) {
    const parsed = schema.safeParse(rec);
    if (parsed.success) continue;
    const id =
      rec && typeof rec === "object" && typeof (rec as { id?: unknown }).id === "string"
        ? (rec as { id: string }).id
        : `#${i}`;
    for (const issue of parsed.error.issues)
      problems.push(`${id}: ${issue.path.join(".") || "(record)"}: ${issue.message}`);
  }
  return problems;
}

/**
 * Parses curated records (any JSON layout) and validates them. Throws listing every problem, each
 * naming the coin and the field (`usdc-circle: risk.custodyModel: …`).
 */
export function parseCuratedCoins(text: string): CuratedCoin[] {
  const raw = z.array(z.unknown()).parse(JSON.parse(text));
  const invalid = schemaProblems(raw, CuratedCoinSchema);
  if (invalid.length > 0) throw new Error(`curated registry: ${invalid.length} problem(s):\n  ${invalid.join("\n  ")}`);
  const records = raw.map((r) => CuratedCoinSchema.parse(r));
  const problems = curatedProblems(records);
  if (problems.length > 0)
    throw new Error(`curated registry: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
  return records;
}

/** Loads and validates the committed curated records. */
export function loadCuratedCoins(path = CURATED_PATH): CuratedCoin[] {
  return parseCuratedCoins(readFileSync(path, "utf8"));
}

/** Code-unit order of ids (locale-independent). */
export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const KEY_ORDER: (keyof CuratedCoin)[] = [
  "id",
  "symbol",
  "issuer",
  "variant",
  "name",
  "pegType",
  "pegMechanism",
  "navToken",
  "floatingPeg",
  "llamaId",
  "geckoId",
  "pharosId",
  "exchangeSymbols",
  "archiveNames",
  "contracts",
  "freezeContracts",
  "supplyContracts",
  "deadFrom",
  "risk",
  "redemption",
];

/**
 * Canonical text of the curated file: a JSON array sorted by id, one record per line, keys in
 * schema order (a `risk` block's too, as parsed), optional fields omitted when unset or empty.
 * Adding a coin adds one line.
 */
export function formatCuratedCoins(records: CuratedCoin[]): string {
  const lines = [...records].sort(byId).map((r) => {
    const o: Record<string, unknown> = {};
    for (const k of KEY_ORDER) {
      const v = r[k];
      if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
      o[k] = v;
    }
    return `  ${JSON.stringify(o)}`;
  });
  return `[\n${lines.join(",\n")}\n]\n`;
}
