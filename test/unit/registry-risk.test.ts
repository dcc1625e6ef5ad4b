import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type CuratedCoin,
  curatedProblems,
  loadCuratedCoins,
  parseCuratedCoins,
} from "../../pipelines/registry/curated.ts";
import { loadRegistry, REGISTRY_PATH } from "../../pipelines/registry/registry.ts";
import { type RiskFacts, RiskFactsSchema } from "../../pipelines/registry/schema.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { expectUncitedFields } from "../helpers/registry-coin.ts";

const registry = loadRegistry();
const curated = loadCuratedCoins();
const byId = new Map(registry.coins.map((c) => [c.id, c]));
const tmp = mkdtempSync(join(tmpdir(), "ballast-registry-risk-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** One value for every risk fact field, stated here (spec 4.x fact list), not read from the schema. */
const FACT_VALUES = {
  backing: "fiat-reserves",
  collateralQuality: "very-low",
  custodyModel: "institutional-top",
  governance: "regulated-entity",
  chainTier: "ethereum",
  deploymentModel: "native-multichain",
  canBeBlacklisted: true,
  proofOfReserves: "independent-audit",
  dependencies: [],
} satisfies Omit<RiskFacts, "sources">;
type FactField = RiskFacts["sources"][number]["fields"][number];
/** The fact fields, in the order the fixture states them. */
const FIELDS = Object.keys(FACT_VALUES) as FactField[];
const facts = (over: Partial<RiskFacts> = {}): RiskFacts => ({
  ...FACT_VALUES,
  sources: [{ fields: FIELDS, label: "Circle transparency", url: "https://www.circle.com/transparency" }],
  ...over,
});
/** The committed curated records with `id`'s risk block replaced (as raw JSON, so invalid blocks survive). */
const curatedText = (id: string, risk: unknown) =>
  JSON.stringify(curated.map((c) => (c.id === id ? { ...c, risk } : c)));

describe("risk facts schema", () => {
  it("fails a block missing a required field, naming the coin and the field", () => {
    const { custodyModel: _, ...missing } = facts();
    expect(() => parseCuratedCoins(curatedText("usdc-circle", missing))).toThrow(/usdc-circle: risk\.custodyModel/);
    // The same for a fact outside the enum.
    expect(() => parseCuratedCoins(curatedText("usdc-circle", { ...facts(), chainTier: "moon" }))).toThrow(
      /usdc-circle: risk\.chainTier/,
    );
  });

  it("fails dependency weights summing to more than 1", () => {
    const deps = [
      { id: "usdc-circle", weight: 0.7, type: "collateral" as const },
      { id: "usdt-tether", weight: 0.4, type: "collateral" as const },
    ];
    const parsed = RiskFactsSchema.safeParse(facts({ dependencies: deps }));
    expect(parsed.success).toBe(false);
    expect(must(parsed.error, "the parse error").issues[0].message).toMatch(/sum to 1\.1, more than 1/);
    expect(() => parseCuratedCoins(curatedText("dai-sky", facts({ dependencies: deps })))).toThrow(
      /dai-sky: risk\.dependencies: dependency weights sum to 1\.1/,
    );
    // Decimal sums that equal 1 pass; a weight outside (0, 1] fails.
    expect(
      RiskFactsSchema.safeParse(
        facts({
          dependencies: [0.7, 0.2, 0.1].map((weight, i) => ({
            id: ["usdc-circle", "usdt-tether", "dai-sky"][i],
            weight,
            type: "collateral" as const,
          })),
        }),
      ).success,
    ).toBe(true);
    expect(
      RiskFactsSchema.safeParse(facts({ dependencies: [{ id: "usdc-circle", weight: 0, type: "collateral" }] }))
        .success,
    ).toBe(false);
  });

  it("fails an unknown dependency id, a self-dependency and a cycle", () => {
    const rec = (id: string, deps: string[]): CuratedCoin => {
      const c = must(
        curated.find((x) => x.id === id),
        `curated coin ${id}`,
      );
      return {
        ...c,
        risk: facts({ dependencies: deps.map((d) => ({ id: d, weight: 0.5, type: "collateral" as const })) }),
      };
    };
    const swap = (...recs: CuratedCoin[]) => curated.map((c) => recs.find((r) => r.id === c.id) ?? c);
    expect(curatedProblems(swap(rec("dai-sky", ["usdc-nowhere"])))).toEqual([
      "dai-sky: risk.dependencies.0.id: unknown registry coin usdc-nowhere",
    ]);
    expect(() => parseCuratedCoins(JSON.stringify(swap(rec("dai-sky", ["usdc-nowhere"]))))).toThrow(
      /dai-sky: risk\.dependencies\.0\.id: unknown registry coin usdc-nowhere/,
    );
    expect(curatedProblems(swap(rec("dai-sky", ["dai-sky"])))[0]).toMatch(
      /dai-sky: risk\.dependencies\.0\.id: a coin cannot depend on itself/,
    );
    expect(curatedProblems(swap(rec("usdc-circle", ["usds-sky"]))).join("\n")).toMatch(
      /dai-sky: risk\.dependencies: cycle dai-sky → usdc-circle → usds-sky → dai-sky/,
    );
  });

  it("fails a fact field that no source cites, naming the field", () => {
    const parsed = RiskFactsSchema.safeParse(
      facts({ sources: [{ fields: ["backing", "collateralQuality"], label: "x", url: "https://example.com/" }] }),
    );
    expectUncitedFields(parsed, FIELDS.slice(2));
    expect(() =>
      parseCuratedCoins(
        curatedText(
          "usdc-circle",
          facts({
            sources: [
              {
                fields: FIELDS.filter((f) => f !== "governance"),
                label: "x",
                url: "https://example.com/",
              },
            ],
          }),
        ),
      ),
    ).toThrow(/usdc-circle: risk\.sources: no source cites governance/);
    // Sources need at least one, and an https URL.
    expect(RiskFactsSchema.safeParse(facts({ sources: [] })).success).toBe(false);
    expect(
      RiskFactsSchema.safeParse(facts({ sources: [{ ...facts().sources[0], url: "ftp://example.com/" }] })).success,
    ).toBe(false);
  });

  it("fails a bad registry.json at load (what the build reads), naming the coin and the field", () => {
    const raw = JSON.parse(readFileSync(REGISTRY_PATH, "utf8")) as {
      coins: { id: string; risk: Record<string, unknown> | null }[];
    };
    const usdcRisk = must(raw.coins.find((c) => c.id === "usdc-circle")?.risk, "usdc-circle's risk block");
    delete usdcRisk.custodyModel;
    const path = join(tmp, "registry.json");
    writeFileSync(path, JSON.stringify(raw));
    expect(() => loadRegistry(path)).toThrow(/usdc-circle: risk\.custodyModel/);
    const daiRisk = must(raw.coins.find((c) => c.id === "dai-sky")?.risk, "dai-sky's risk block");
    usdcRisk.custodyModel = "institutional-top";
    (daiRisk.dependencies as { id: string }[])[0].id = "usdc-nowhere";
    writeFileSync(path, JSON.stringify(raw));
    expect(() => loadRegistry(path)).toThrow(/dai-sky: risk\.dependencies\.0\.id: unknown registry coin usdc-nowhere/);
  });
});

describe("committed risk facts", () => {
  it("copies each curated block into the registry, null elsewhere", () => {
    for (const c of curated)
      expect(must(byId.get(c.id), `${c.id} in the registry`).risk ?? null, c.id).toEqual(c.risk ?? null);
    for (const c of registry.coins) expect(c, c.id).toHaveProperty("risk");
  });

  it("names registry coins in every dependency, without cycles", () => {
    for (const c of registry.coins)
      for (const d of c.risk?.dependencies ?? []) expect(byId.has(d.id), `${c.id} → ${d.id}`).toBe(true);
    expect(curatedProblems(curated)).toEqual([]);
  });

  it("cites Pharos facts at the extract's recorded commit", () => {
    const core = JSON.parse(readFileSync(join(CAPTURE_DIR, "pharos-watch/registry/coins.core.json"), "utf8")) as {
      _source: { path: string; commit: string };
    }[];
    const refs = new Set(core.map((c) => `${c._source.path}@${c._source.commit}`));
    for (const c of curated) {
      for (const s of c.risk?.sources ?? []) {
        if (!s.label.startsWith("pharos-core ")) continue;
        const ref = s.label.slice("pharos-core ".length);
        expect(refs.has(ref), `${c.id}: ${s.label}`).toBe(true);
        const [path, commit] = ref.split("@");
        expect(s.url).toBe(`https://github.com/TokenBrice/pharos-watch/blob/${commit}/${path}`);
      }
    }
  });

  it("gives the largest coins, the Pharos core coins and the well-known coins a block", () => {
    const expected = [
      "usdt-tether",
      "usdc-circle",
      "usde-ethena",
      "dai-sky",
      "usds-sky",
      "usd1-world-liberty-financial",
      "buidl-blackrock",
      "usdtb-ethena",
      "usdf-falcon-finance",
      "pyusd-paypal",
      "fdusd-first-digital",
      "benji-franklin-templeton",
      "rlusd-ripple",
      "usdx-stables-labs",
      "usdy-ondo",
      "usyc-circle",
      "usd0-usual",
      "usdg-paxos",
      "tusd-techteryx",
      "a7a5-old-vector",
      "usdd-tron-dao-reserve",
      "m-m0",
      "gho-aave",
      "usr-resolv",
      "usdo-openeden",
      "tbill-openeden",
      "busd-binance",
      "eurc-circle",
      "dola-inverse-finance",
      "ausd-agora",
      "frax-frax-finance",
      "deusd-elixir",
      "fxusd-aladdindao",
      "crvusd-curve",
      "usdz-anzen",
      "iusd-infinifi",
      "frxusd-frax-finance",
      // Pharos core extract (beyond the above) and well-known coins.
      "eurcv-societe-generale-forge",
      "eure-monerium",
      "paxg-paxos",
      "xaut-tether",
      "usdp-paxos",
      "gusd-gemini",
      "lusd-liquity",
      "susd-synthetix",
    ];
    for (const id of expected) expect(byId.get(id)?.risk, id).toBeTruthy();
    const pharos = new Set(curated.filter((c) => c.pharosId && c.risk).map((c) => c.pharosId));
    const core = JSON.parse(readFileSync(join(CAPTURE_DIR, "pharos-watch/registry/coins.core.json"), "utf8")) as {
      id: string;
    }[];
    for (const c of core) expect(pharos.has(c.id), c.id).toBe(true);
    // Coins dead long before any recorded as-of keep no block (graded as defunct).
    for (const id of ["ust-terraform-labs", "usdn-neutrino", "husd-stable-universal", "busd-paxos"])
      expect(must(byId.get(id), `${id} in the registry`).risk, id).toBeNull();
  });

  it("agrees with how the field sees the coins", () => {
    const risk = (id: string) => must(must(byId.get(id), `${id} in the registry`).risk, `${id}'s risk facts`);
    for (const id of ["usdc-circle", "pyusd-paypal", "usdp-paxos"]) {
      expect(risk(id)).toMatchObject({
        backing: "fiat-reserves",
        collateralQuality: "very-low",
        custodyModel: "institutional-top",
        governance: "regulated-entity",
      });
    }
    expect(risk("a7a5-old-vector").custodyModel).toBe("institutional-sanctioned");
    expect(risk("usde-ethena").backing).toBe("delta-neutral");
    expect(risk("dai-sky").canBeBlacklisted).toBe("inherited");
    expect(risk("dai-sky").dependencies).toEqual([{ id: "usdc-circle", weight: 0.3, type: "collateral" }]);
    expect(risk("usds-sky").dependencies).toEqual([{ id: "dai-sky", weight: 1, type: "mechanism" }]);
    // On-chain collateral is verifiable in real time, never `none`.
    for (const c of registry.coins)
      if (c.risk?.custodyModel === "onchain") expect(c.risk.proofOfReserves, c.id).toBe("real-time");
  });
});
