import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCapture } from "../../build/capture.ts";
import { readLiveCaptures } from "../../build/captures.ts";
import { loadBuildConfig } from "../../build/config.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import {
  bluechipRatingsEndpoint,
  bluechipSlugs,
  fetchBluechipCoin,
} from "../../pipelines/sources/bluechip/bluechip.ts";
import { liveCapturePlan } from "../../pipelines/sources/endpoints.ts";
import { HttpClient, UpstreamError } from "../../pipelines/sources/http-client.ts";
import type { Capture } from "../../pipelines/sources/types.ts";
import { bluechipRatingsArtifact, BluechipRatingsSchema } from "../../site-data/bluechip-ratings.ts";
import { BLUECHIP_FIXTURE, startBluechipServer } from "../helpers/bluechip-server.ts";
import { must } from "../helpers/must.ts";

const AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;
const OBSERVED = AS_OF - 3600;
const FIXTURE_SLUGS = [
  "usdc",
  "usdt",
  "dai",
  "gusd",
  "usdp",
  "paxg",
  "bold",
  "cetes",
  "frax",
  "tusd",
  "nope",
  "broken",
];

let server: Awaited<ReturnType<typeof startBluechipServer>>;
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  server = await startBluechipServer({ slowMs: 1500 });
});
afterAll(() => server?.close());

const client = (over: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) =>
  new HttpClient({ name: "bluechip", baseUrl: server.url, retries: 0, backoffMs: 5, timeoutMs: 2000, ...over });
/** The error a call fails with (the test fails when it succeeds). */
const failure = (p: Promise<unknown>): Promise<UpstreamError> =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: UpstreamError) => e,
  );
const cap = (slug: string, payload: unknown): Capture => ({
  endpoint: "bluechip.ratings",
  params: { slug },
  observedAt: OBSERVED,
  origin: "live",
  path: `raw/bluechip/2025-09-06/${slug}.json.gz`,
  sha256: "x",
  payload,
});
const rows = (slug: string) => {
  const payload = bluechipRatingsEndpoint.payloadSchema.parse(BLUECHIP_FIXTURE[slug].body);
  return bluechipRatingsEndpoint.toRows(payload, cap(slug, payload));
};

describe("bluechip live client against a local node:http server", () => {
  it("fetches a slug's coin-data record through the source's client", async () => {
    const body = await must(bluechipRatingsEndpoint.fetchLive, "bluechip.ratings fetchLive")(client(), {
      slug: "usdc",
    });
    expect(body).toEqual(BLUECHIP_FIXTURE.usdc.body);
    expect(server.requests).toContain("/coin-data/usdc");
  });

  it("a slow upstream times out: UpstreamError naming the source, after the bounded retries", async () => {
    // The server answers after 1.5 s, ten times the 150 ms attempt timeout: the call can only fail
    // (rather than succeed late) if each attempt's timeout fired. How long that takes is measured by
    // `make bench` (scripts/bench/fault-latency.ts), not here.
    const c = client({ timeoutMs: 150, retries: 1 });
    const err = await failure(fetchBluechipCoin(c, "slow"));
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.source).toBe("bluechip");
    expect(err.status).toBeUndefined(); // no HTTP answer was awaited
    expect(err.message).toMatch(/^bluechip: coin-data\/slow failed: .*(timeout|aborted)/i);
    // One attempt and exactly one retry.
    expect(server.requests.filter((p) => p === "/coin-data/slow")).toHaveLength(2);
  });

  it("malformed payloads are errors naming the source and slug", async () => {
    await expect(fetchBluechipCoin(client(), "broken")).rejects.toThrow(
      /^bluechip: coin-data\/broken returned a non-JSON body$/,
    );
    const err = await failure(fetchBluechipCoin(client(), "weird"));
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.message).toMatch(
      /^bluechip: coin-data\/weird returned a payload that is not a coin-data record list \(data: /,
    );
  });

  it("a slug Bluechip does not rate is a 404 UpstreamError, not retried", async () => {
    const before = server.requests.length;
    const err = await failure(fetchBluechipCoin(client({ retries: 3 }), "nope"));
    expect(err).toMatchObject({ source: "bluechip", status: 404 });
    expect(server.requests.length - before).toBe(1);
  });
});

describe("bluechip rows", () => {
  it("normalises grade, dates, symbol and report url", () => {
    expect(rows("usdc")).toEqual({
      dropped: {},
      rows: [
        {
          slug: "usdc",
          name: "USDC",
          symbol: "USDC",
          grade: "A",
          score: null,
          report_date: "2024-11-05",
          last_change_date: "2023-03-14",
          url: "https://bluechip.org/en/coins/usdc",
          observed_at: OBSERVED,
        },
      ],
    });
    expect(rows("usdt").rows[0]).toMatchObject({ grade: "C+", report_date: "2024-10-01", last_change_date: null });
    expect(rows("dai").rows[0]).toMatchObject({ grade: "A-", score: 82.5 });
    // no symbol in the record: the slug (Bluechip's lower-case ticker) stands for it
    expect(rows("paxg").rows[0]).toMatchObject({ symbol: "PAXG", name: "PAX Gold" });
  });

  it("drops a malformed record by reason, one at a time", () => {
    expect(rows("frax")).toEqual({ rows: [], dropped: { "grade-invalid": 1 } });
    expect(rows("tusd")).toEqual({ rows: [], dropped: { "coin-data-empty": 1 } });
    const bad = (record: object) => bluechipRatingsEndpoint.toRows({ data: [record] }, cap("x", null)).dropped;
    expect(bad({ name: "X" })).toEqual({ "grade-missing": 1 });
    expect(bad({ grade: "A", date_of_rating: "2024-02-30" })).toEqual({ "report-date-invalid": 1 });
    expect(bad({ grade: "A", score: 140 })).toEqual({ "score-invalid": 1 });
    expect(bad({ grade: "A", symbol: 7 })).toEqual({ "symbol-missing": 1 });
    expect(bluechipRatingsEndpoint.toRows({ data: ["junk"] }, cap("x", null)).dropped).toEqual({
      "coin-record-invalid": 1,
    });
    expect(bluechipRatingsEndpoint.payloadSchema.safeParse({ rating: "A" }).success).toBe(false);
  });

  it("the capture plan asks for each configured slug", () => {
    expect(bluechipSlugs(" USDC, dai,usdc ")).toEqual(["usdc", "dai"]);
    expect(bluechipSlugs()).toContain("usdt");
    const plan = liveCapturePlan({
      detailLlamaIds: [],
      chartGeckoIds: [],
      fxStart: "2025-01-01",
      bluechipSlugs: ["usdc", "dai"],
    });
    expect(plan.filter((s) => s.endpoint === "bluechip.ratings")).toEqual([
      { endpoint: "bluechip.ratings", params: { slug: "usdc" } },
      { endpoint: "bluechip.ratings", params: { slug: "dai" } },
    ]);
  });
});

/** A one-asset DefiLlama list, so the model DAG has a current coin. */
const LIST: Capture = {
  endpoint: "defillama.stablecoins",
  params: {},
  observedAt: AS_OF,
  origin: "recorded",
  path: "list.json",
  sha256: "x",
  payload: {
    peggedAssets: [
      {
        id: "1",
        name: "Tether",
        symbol: "USDT",
        pegType: "peggedUSD",
        pegMechanism: "fiat-backed",
        price: 1,
        circulating: { peggedUSD: 1e9 },
        circulatingPrevDay: { peggedUSD: 1e9 },
        circulatingPrevWeek: { peggedUSD: 1e9 },
        circulatingPrevMonth: { peggedUSD: 1e9 },
        chainCirculating: {},
      },
    ],
  },
};

/** Runs load + model over `captures` and assembles the ratings artifact; returns the mart rows, the load report and the artifact output. */
async function ratingsBuild(captures: Capture[]) {
  const m = await loadAndModel({ asOf: AS_OF, captures: [LIST, ...captures] });
  try {
    const mart = await m.db.all("select * from bluechip_ratings order by slug");
    const out: Record<string, Record<string, unknown>[]> = {};
    for (const [name, sql] of Object.entries(bluechipRatingsArtifact.queries)) out[name] = await m.db.all(sql);
    const assembled = bluechipRatingsArtifact.assemble(out, { asOf: AS_OF, sourceObservedAt: m.sourceObservedAt });
    return {
      mart,
      report: must(
        m.sources.find((s) => s.endpoint === "bluechip.ratings"),
        "the bluechip.ratings source report",
      ),
      assembled,
    };
  } finally {
    m.db.close();
  }
}

describe("capture → capture reader → load → mart → artifact", () => {
  let dir: string;
  let written: string[];
  let captures: Capture[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ballast-bluechip-"));
    const sink = new FsSink(dir);
    written = await runCapture(loadBuildConfig({}), sink, {
      baseUrls: { bluechip: server.url },
      now: () => OBSERVED * 1000,
      plan: FIXTURE_SLUGS.map((slug) => ({ endpoint: "bluechip.ratings", params: { slug } })),
    });
    captures = await readLiveCaptures(sink);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("`capture` writes one raw/bluechip/<day>/ file per answered slug; a 404 or malformed answer writes none", async () => {
    expect(written).toHaveLength(FIXTURE_SLUGS.length - 2);
    expect(written).toContain(`raw/bluechip/2025-09-06/bluechip.ratings-slug-usdc-${OBSERVED}.json.gz`);
    expect(written.some((k) => /slug-(nope|broken)-/.test(k))).toBe(false);
    const daiKey = must(
      written.find((k) => k.includes("slug-dai-")),
      "the written dai capture",
    );
    const file = JSON.parse(
      gunzipSync(must(await new FsSink(dir).get(daiKey), `the stored ${daiKey}`)).toString("utf8"),
    );
    expect(file).toEqual({
      endpoint: "bluechip.ratings",
      params: { slug: "dai" },
      observedAt: OBSERVED,
      payload: BLUECHIP_FIXTURE.dai.body,
    });
  });

  it("the capture reader returns each raw capture with its endpoint, slug and observation time", () => {
    expect(
      captures
        .filter((c) => c.endpoint === "bluechip.ratings")
        .map((c) => c.params.slug)
        .sort(),
    ).toEqual(FIXTURE_SLUGS.filter((s) => s !== "nope" && s !== "broken").sort());
    expect(
      captures.every(
        (c) => c.origin === "live" && c.observedAt === OBSERVED && c.path.startsWith("raw/bluechip/2025-09-06/"),
      ),
    ).toBe(true);
  });

  it("joins ratings to registry ids by symbol (names break ties); unknown and ambiguous symbols are unmatched with a reason", async () => {
    const { mart, report, assembled } = await ratingsBuild(captures.filter((c) => c.endpoint === "bluechip.ratings"));
    expect(report).toMatchObject({
      status: "ok",
      rows: 8,
      dropped: { "grade-invalid": 1, "coin-data-empty": 1 },
      newestObservedAt: OBSERVED,
    });
    expect(mart.map((r) => [r.slug, r.stablecoin_id, r.unmatched_reason])).toEqual([
      ["bold", null, "ambiguous-symbol"],
      ["cetes", null, "unknown-symbol"],
      ["dai", "dai-sky", null],
      ["gusd", "gusd-gemini", null],
      ["paxg", "paxg-paxos", null],
      ["usdc", "usdc-circle", null],
      ["usdp", "usdp-paxos", null],
      ["usdt", "usdt-tether", null],
    ]);
    expect(assembled.dataAsOf).toBe(OBSERVED);
    expect(assembled.files).toHaveLength(1);
    const payload = BluechipRatingsSchema.parse(assembled.files[0].payload);
    expect(assembled.files[0].path).toBe("site-data/bluechip-ratings.json");
    expect(payload.updatedAt).toBe(OBSERVED);
    expect(payload.ratings.map((r) => `${r.stablecoinId}:${r.grade}`)).toEqual([
      "dai-sky:A-",
      "gusd-gemini:B+",
      "paxg-paxos:A-",
      "usdc-circle:A",
      "usdp-paxos:A",
      "usdt-tether:C+",
    ]);
    expect(payload.ratings.find((r) => r.stablecoinId === "usdc-circle")).toEqual({
      stablecoinId: "usdc-circle",
      slug: "usdc",
      name: "USDC",
      symbol: "USDC",
      grade: "A",
      score: null,
      reportDate: "2024-11-05",
      lastChangeDate: "2023-03-14",
      url: "https://bluechip.org/en/coins/usdc",
      observedAt: OBSERVED,
    });
    expect(
      must(
        payload.ratings.find((r) => r.stablecoinId === "dai-sky"),
        "dai-sky's rating",
      ).score,
    ).toBe(82.5);
    expect(payload.unmatched).toEqual([
      {
        slug: "bold",
        name: "BOLD",
        symbol: "BOLD",
        grade: "B",
        reason: "ambiguous-symbol",
        candidates: ["bold-liquity", "bold-liquity-legacy"],
        url: "https://bluechip.org/en/coins/bold",
        observedAt: OBSERVED,
      },
      {
        slug: "cetes",
        name: "Etherfuse CETES",
        symbol: "CETES",
        grade: "B-",
        reason: "unknown-symbol",
        candidates: [],
        url: "https://bluechip.org/en/coins/cetes",
        observedAt: OBSERVED,
      },
    ]);
  });

  it("two ratings resolving to one coin are both unmatched, never one picked", async () => {
    const twin = cap("usd-coin", { data: [{ name: "USD Coin", symbol: "usdc", grade: "B" }] });
    const { mart } = await ratingsBuild([cap("usdc", BLUECHIP_FIXTURE.usdc.body), twin]);
    expect(mart.map((r) => [r.slug, r.stablecoin_id, r.unmatched_reason])).toEqual([
      ["usd-coin", null, "duplicate-stablecoin"],
      ["usdc", null, "duplicate-stablecoin"],
    ]);
  });

  it("without a rating capture the mart is empty and no file is published", async () => {
    const { mart, report, assembled } = await ratingsBuild([]);
    expect(mart).toEqual([]);
    expect(report.status).toBe("missing");
    expect(assembled).toEqual({ files: [], dataAsOf: null });
  });
});
