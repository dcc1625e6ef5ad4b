import Papa from "papaparse";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  coinIdFor,
  CURATED_PATH,
  curatedProblems,
  formatCuratedCoins,
  loadCuratedCoins,
  slug,
  tickerSlug,
} from "../../pipelines/registry/curated.ts";
import {
  buildRegistry,
  chainIdForLabel,
  generateRegistry,
  readRegistryInputs,
} from "../../pipelines/registry/generate-registry.ts";
import { loadRegistry, REGISTRY_PATH } from "../../pipelines/registry/registry.ts";
import { StablecoinIdSchema } from "../../pipelines/registry/schema.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";

const registry = loadRegistry();
const curated = loadCuratedCoins();
const byId = new Map(registry.coins.map((c) => [c.id, c]));
const byLlama = new Map(registry.coins.flatMap((c) => (c.llamaId ? [[c.llamaId, c] as const] : [])));
/** The registry coin `id` (fails the test naming it when the registry has none). */
const coin = (id: string) => must(byId.get(id), `${id} in the registry`);
/** The registry coin of DefiLlama id `llamaId` (fails the test naming it when the registry has none). */
const coinOfLlama = (llamaId: string) => must(byLlama.get(llamaId), `llamaId ${llamaId} in the registry`);
const inputs = readRegistryInputs(CAPTURE_DIR);

describe("registry id rule", () => {
  it("builds <ticker>-<issuer> from the ticker and the curated issuer, never the name", () => {
    expect(coinIdFor("crvUSD", "Curve")).toBe("crvusd-curve");
    expect(coinIdFor("DOLA", "Inverse Finance")).toBe("dola-inverse-finance");
    expect(coinIdFor("BOLD", "Liquity", "legacy")).toBe("bold-liquity-legacy");
    expect(coinIdFor("PUSd", "JPEG'd")).toBe("pusd-jpegd");
    expect(tickerSlug("USD₮0")).toBe("usdt0");
    expect(tickerSlug("USD+")).toBe("usdplus");
    expect(tickerSlug("USDC.m")).toBe("usdc-m");
    expect(slug("Ünïcode  Dollar!")).toBe("unicode-dollar");
  });

  it("maps DefiLlama chain labels to registry slugs", () => {
    expect(chainIdForLabel("OP Mainnet")).toBe("optimism");
    expect(chainIdForLabel("BSC")).toBe("bsc");
    expect(chainIdForLabel("Arbitrum Nova")).toBe("arbitrum-nova");
  });

  it("flags curated records that break the id rule, ordering or uniqueness", () => {
    const base = {
      symbol: "GHO",
      issuer: "Aave",
      pegType: "peggedUSD",
      pegMechanism: "crypto-backed",
      llamaId: "118",
      geckoId: "gho",
    };
    expect(curatedProblems([{ ...base, id: "gho-aave" }])).toEqual([]);
    expect(curatedProblems([{ ...base, id: "gho-gho" }])[0]).toMatch(/id must be gho-aave/);
    expect(
      curatedProblems([
        { ...base, id: "gho-aave" },
        { ...base, id: "gho-aave-v2", variant: "v2", geckoId: null },
      ]).join("\n"),
    ).toMatch(/llamaId 118 already used/);
  });
});

describe("committed registry", () => {
  it("equals what the generator makes from the curated records and the recorded inputs (no drift)", () => {
    expect(JSON.parse(readFileSync(REGISTRY_PATH, "utf8"))).toEqual(generateRegistry(CAPTURE_DIR));
  });

  it("keeps the curated file in its canonical layout (sorted by id, one record per line)", () => {
    expect(readFileSync(CURATED_PATH, "utf8")).toBe(formatCuratedCoins(curated));
  });

  it("has unique ids of the form slug(ticker)-slug(issuer), a version word only on a documented collision", () => {
    const ids = registry.coins.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    const curatedById = new Map(curated.map((c) => [c.id, c]));
    for (const c of registry.coins) {
      expect(StablecoinIdSchema.safeParse(c.id).success).toBe(true);
      expect(c.id).not.toMatch(/-\d{4}(-\d{2})?$/);
      const base = `${tickerSlug(c.symbol)}-${slug(c.issuer)}`;
      const variant = must(curatedById.get(c.id), `curated record ${c.id}`).variant;
      if (!variant) {
        expect(c.id).toBe(base);
        continue;
      }
      expect(variant).toMatch(/^(v\d+|legacy)$/);
      expect(c.id).toBe(`${base}-${variant}`);
      // The suffix is there only because another coin holds the plain ticker-issuer id.
      expect(byId.get(base)?.issuer).toBe(c.issuer);
    }
  });

  it("gives the well-known coins their issuer ids", () => {
    const expected: Record<string, string> = {
      1: "usdt-tether",
      2: "usdc-circle",
      118: "gho-aave",
      110: "crvusd-curve",
      8: "lusd-liquity",
      213: "m-m0",
      15: "dola-inverse-finance",
      14: "usdd-tron-dao-reserve",
      5: "dai-sky",
      209: "usds-sky",
      3: "ust-terraform-labs",
      146: "usde-ethena",
      120: "pyusd-paypal",
      286: "usdg-paxos",
      250: "rlusd-ripple",
      119: "fdusd-first-digital",
      262: "usd1-world-liberty-financial",
      50: "eurc-circle",
      269: "bold-liquity",
      227: "bold-liquity-legacy",
    };
    for (const [llamaId, id] of Object.entries(expected))
      expect(byLlama.get(llamaId)?.id, `llamaId ${llamaId}`).toBe(id);
    expect(coin("dai-sky").issuer).toBe("Sky");
    expect(coin("usdd-tron-dao-reserve").issuer).toBe("Tron DAO Reserve");
    expect(coin("ust-terraform-labs").issuer).toBe("Terraform Labs");
    expect(coin("usdt-tether").contracts.length).toBeGreaterThan(3);
    // Pharos-only coins keep their curated Pharos ids.
    expect(coin("paxg-paxos").pegCurrency).toBe("XAU");
    expect(coin("xaut-tether").pegCurrency).toBe("XAU");
  });

  it("marks NAV tokens and floating pegs", () => {
    const nav = registry.coins
      .filter((c) => c.navToken)
      .map((c) => c.id)
      .sort();
    expect(nav).toEqual([
      "csusdl-coinshift",
      "knox-reserve",
      "susd-solayer",
      "tbill-openeden",
      "usd3-reserve",
      "usdy-ondo",
      "usyc-circle",
    ]);
    for (const id of ["usdc-circle", "buidl-blackrock", "benji-franklin-templeton", "susd-synthetix"])
      expect(coin(id).navToken).toBe(false);
    for (const a of inputs.metadata.filter((x) => x.pegType === "peggedVAR")) {
      const c = coinOfLlama(a.id);
      expect(c.floatingPeg, c.id).toBe(true);
      expect(c.pegCurrency, c.id).toBe("VAR");
    }
    for (const id of ["fpi-frax-finance", "rai-reflexer", "isc-isc-money", "silk-shade-protocol", "hai-lets-get-hai"])
      expect(coin(id).floatingPeg, id).toBe(true);
    for (const c of registry.coins) expect(c.floatingPeg).toBe(c.pegCurrency === "VAR");
  });

  it("carries exchange symbols and archive names", () => {
    expect(coin("usdc-circle").exchangeSymbols).toEqual(["USDC"]);
    expect(coin("usdt-tether").exchangeSymbols).toEqual(["USDT"]);
    expect(coin("fdusd-first-digital").exchangeSymbols).toEqual(["FDUSD"]);
    const csv = readFileSync(`${CAPTURE_DIR}/partrita-stablecoin-tracker/stablecoin_marketcap.csv`, "utf8").replace(
      /^\uFEFF/,
      "",
    );
    const names = new Set(
      Papa.parse<{ coin_name: string }>(csv, { header: true, skipEmptyLines: true }).data.map((r) => r.coin_name),
    );
    const notCoins = new Set(["Aave Usdc Linea", "Lp Scurve"]);
    for (const name of names) {
      if (notCoins.has(name)) continue;
      expect(registry.coins.filter((c) => c.archiveNames.includes(name)).length, name).toBe(1);
    }
    expect(coin("usdd-tron-dao-reserve").archiveNames).toEqual(["USDD", "Usdd"]);
    expect(coin("usde-ethena").archiveNames).toEqual(["Ethena USDe"]);
  });

  it("covers every recorded DefiLlama, Pharos core and cemetery coin with a curated record", () => {
    for (const a of [...inputs.list.peggedAssets, ...inputs.metadata]) {
      const c = byLlama.get(a.id);
      expect(c, `llamaId ${a.id}`).toBeDefined();
      expect(must(c, `llamaId ${a.id} in the registry`).provenance).toContain("curated");
    }
    const pharosIds = new Set(curated.map((c) => c.pharosId));
    for (const p of [...inputs.core.map((c) => c.id), ...inputs.cemetery.map((c) => c.id)])
      expect(pharosIds.has(p), p).toBe(true);
    expect(registry.coins.filter((c) => c.provenance.includes("unreviewed"))).toEqual([]);
    // Curated upstream ids point at real upstream rows.
    const llama = new Set([...inputs.metadata, ...inputs.list.peggedAssets].map((a) => a.id));
    const pharos = new Set([...inputs.core.map((c) => c.id), ...inputs.cemetery.map((c) => c.id)]);
    for (const c of curated) {
      if (c.llamaId) expect(llama.has(c.llamaId), c.id).toBe(true);
      if (c.pharosId) expect(pharos.has(c.pharosId), c.id).toBe(true);
    }
  });

  it("dates every death DefiLlama or the cemetery records, in YYYY[-MM[-DD]]", () => {
    for (const a of inputs.metadata.filter((x) => x.deadFrom))
      expect(coinOfLlama(a.id).deadFrom, a.id).toBe(a.deadFrom);
    const byPharos = new Map(curated.flatMap((c) => (c.pharosId ? [[c.pharosId, coin(c.id)] as const] : [])));
    for (const row of inputs.cemetery) {
      const c = must(byPharos.get(row.id), `cemetery coin ${row.id} in the registry`);
      expect(c.deadFrom, row.id).not.toBeNull();
      expect(c.causeOfDeath, row.id).toBe(row.causeOfDeath);
    }
    for (const c of registry.coins) if (c.deadFrom) expect(c.deadFrom).toMatch(/^\d{4}(-\d{2}(-\d{2})?)?$/);
    expect(coin("ust-terraform-labs").deadFrom).toBe("2022-05-09");
    expect(coin("usdc-circle").deadFrom).toBeNull();
  });

  it("lists an upstream coin without a curated record as unreviewed, with a provisional id", () => {
    const reg = buildRegistry(
      curated.filter((c) => c.id !== "gho-aave"),
      inputs,
    );
    const gho = must(
      reg.coins.find((c) => c.llamaId === "118"),
      "llamaId 118 in the registry",
    );
    expect(gho.id).toBe("gho-unreviewed-118");
    expect(gho.issuer).toBe("unreviewed");
    expect(gho.provenance).toEqual(["unreviewed"]);
  });
});

describe("donations ledger (pipelines/registry/donations.json)", () => {
  it("every reviewed (stablecoin, chain) pair resolves to a registry contract, and the committed ledger ships no receipts", async () => {
    const { loadDonations, DONATIONS_PATH } = await import("../../pipelines/registry/donations.ts");
    const ledger = loadDonations(registry, DONATIONS_PATH);
    expect(ledger.unresolved).toEqual([]);
    expect(ledger.qualifying.length).toBeGreaterThan(20);
    for (const q of ledger.qualifying)
      expect(
        coin(q.stablecoinId).contracts.some((c) => c.chain === q.chain && c.address.toLowerCase() === q.contract),
      ).toBe(true);
    expect(ledger.receipts).toEqual([]);
    expect(ledger.rejected).toEqual({});
  });
});
