import { describe, expect, it } from "vitest";
import {
  assessHealth,
  buildHealth,
  causePublicImpact,
  circuitGroup,
  circuitOf,
  circuitsOf,
  type HealthOptions,
} from "../../api/health.ts";
import { ROUTES } from "../../api/routes/index.ts";
import { notYetAvailableFeatures } from "../../api/routes/not-yet-available.ts";
import { ENDPOINTS } from "../../pipelines/sources/endpoints.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { cleanManifestRecords, manifestFile } from "../helpers/manifest.ts";
import { must } from "../helpers/must.ts";

// Expected values follow spec 2.8 / 3.2 / 8, not the implementation:
// generic caches fresh ≤ 8x budget, degraded ≤ 12x, stale beyond; any stale cache → `stale`; any degraded
// cache, ≥ 3 open circuit groups or an unhealthy state store (public-impact cause "db unhealthy") →
// at least `degraded`; fx-rates follows its own cadence (ECB working day: fresh ≤ 4 d, degraded ≤ 8 d).

const AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;
const DAY = 86400;
type Source = BuildManifest["sources"][number];
type Capture = Source["captures"][number];

const capture = (observedAt: number, rows: number, rejected?: string): Capture => ({
  path: `raw/${observedAt}.json.gz`,
  origin: "live",
  observedAt,
  sha256: "0",
  rows,
  ...(rejected ? { rejected } : {}),
});
/** A manifest source whose captures all loaded rows (status `ok`, newest observation `at`). */
const source = (endpoint: string, at: number | null, extra: Partial<Source> = {}): Source => ({
  endpoint,
  status: at === null ? "missing" : "ok",
  rows: at === null ? 0 : 10,
  dropped: {},
  newestObservedAt: at,
  captures: at === null ? [] : [capture(at, 10)],
  ...extra,
});
const file = (artifact: string, maxAgeSec: number, dataAsOf: number | null = AS_OF) =>
  manifestFile(artifact, maxAgeSec, dataAsOf);

/** A build as of AS_OF where every cache and source is fresh. */
function manifest(over: Partial<BuildManifest> = {}): BuildManifest {
  return {
    schemaVersion: "1.2.0",
    buildId: "20250907T0000Z-test",
    asOf: AS_OF,
    generatedAt: AS_OF,
    clock: "wall",
    contentHash: "0",
    files: [
      file("stablecoins", 600),
      file("stablecoin-charts", 3600),
      file("stress-signals", 3600),
      file("peg-summary", 900),
    ],
    sources: [
      source("defillama.stablecoins", AS_OF),
      source("coingecko.markets", AS_OF),
      source("frankfurter.rates", AS_OF - DAY),
      source("alchemy.daily_prices", AS_OF - DAY),
      source("binance.klines", AS_OF),
      source("onchain.total_supply_samples", AS_OF - DAY),
    ],
    ...cleanManifestRecords(),
    ...over,
  };
}
const statusAffecting = (w: string[]) => w.filter((x) => x.includes("sets status"));
/** Health of build `m` as the health route assesses it: features not yet available from the route table. */
const health = (m: BuildManifest, now = AS_OF + 60, opts: HealthOptions = {}) =>
  buildHealth({ manifest: m }, now, "wall", { notYetAvailable: notYetAvailableFeatures, ...opts });

describe("health status (spec 2.8)", () => {
  it("everything fresh → healthy, no status-affecting warning; not-yet-available features are only reported", () => {
    const h = health(manifest());
    expect(h.status).toBe("healthy");
    expect(statusAffecting(h.warnings)).toEqual([]);
    expect(h.caches.stablecoins).toMatchObject({ ageSeconds: 60, maxAge: 600, healthy: true });
    expect(h.caches["fx-rates"]).toMatchObject({ sourceStatus: "fresh", healthy: true, mode: "live", warning: null });
    expect(
      h.warnings.some((w) => w.startsWith("not yet available") && w.includes("usds-status") && w.includes("503")),
    ).toBe(true);
    expect(h).not.toHaveProperty("stateStore");
  });

  it("an empty optional recorded capture skipped by the build → degraded, naming the file and endpoint", () => {
    const h = health(
      manifest({
        skippedCaptures: [
          {
            file: "partrita-stablecoin-tracker/stablecoin_marketcap.csv",
            endpoint: "coingecko.market_chart",
            reason: "header-only",
          },
        ],
      }),
    );
    expect(h.status).toBe("degraded");
    expect(statusAffecting(h.warnings)).toEqual([
      expect.stringContaining(
        "partrita-stablecoin-tracker/stablecoin_marketcap.csv (coingecko.market_chart, header-only)",
      ),
    ]);
  });

  it("names every route that answers 503 not yet available, and only those", () => {
    const reported = health(manifest())
      .warnings.filter((w) => w.startsWith("not yet available"))
      .join("\n");
    for (const r of ROUTES) {
      if (r.kind !== "json" || !r.notYetAvailable || r.lane === "admin") continue;
      expect(reported).toContain(r.path.replace(/:([A-Za-z]+)/g, "{$1}"));
    }
    for (const served of ["/api/stablecoins", "/api/depeg-events", "/api/events", "/api/peg-summary"])
      expect(reported).not.toContain(`${served},`);
    expect(reported).not.toContain("/api/daily-digest");
    expect(reported).not.toContain("/api/report-cards");
    expect(reported).not.toContain("/api/blacklist");
  });

  it("share images (og-images) are listed as not yet available only while the build lacks them", () => {
    const og = (path: string) => ({
      path,
      sha256: "x",
      bytes: 1,
      rows: null,
      dataAsOf: AS_OF,
      schemaVersion: "1.0.0",
      artifact: "og:x",
    });
    const without = health(manifest())
      .warnings.filter((w) => w.includes("og-images"))
      .join("\n");
    expect(without).toContain(
      "/api/og/stablecoin/{stablecoinId}, /api/og/safety-scores, /api/og/depeg, /api/og/stability-index answer 503 `Data not yet available: og-images`",
    );
    const files = [
      ...manifest().files,
      ...["og/stablecoin/usdt-tether.png", "og/safety-scores.png", "og/depeg.png", "og/stability-index.png"].map(og),
    ];
    expect(health(manifest({ files })).warnings.filter((w) => w.includes("og-images"))).toEqual([]);
    const partial = health(manifest({ files: files.filter((f) => f.path !== "og/depeg.png") })).warnings.filter((w) =>
      w.includes("og-images"),
    );
    expect(partial).toEqual([
      expect.stringContaining("og-images — no build publishes it yet; /api/og/depeg answers 503"),
    ]);
  });

  it("a route bound to an optional artifact is not yet available until its file is published, then a cache", () => {
    const optional = ROUTES.flatMap((r) => (r.kind === "json" && r.artifact?.optional ? [r] : []));
    expect(optional.map((r) => r.path)).toContain("/api/bluechip-ratings");
    const reported = health(manifest())
      .warnings.filter((w) => w.startsWith("not yet available"))
      .join("\n");
    for (const r of optional)
      expect(reported).toContain(
        `${must(r.artifact, `${r.path}'s artifact`).key} — no build publishes it yet; ${r.path}`,
      );
    const published = health(manifest({ files: [...manifest().files, file("bluechip-ratings", 43200, AS_OF - 3600)] }));
    expect(published.warnings.some((w) => w.includes("/api/bluechip-ratings"))).toBe(false);
    expect(published.caches["bluechip-ratings"]).toMatchObject({ ageSeconds: 3660, maxAge: 43200, healthy: true });
    expect(published.status).toBe("healthy");
  });

  it("a stale fx-rates cache makes the whole resource stale; degraded fx makes it degraded", () => {
    const at = (age: number) =>
      manifest({
        sources: manifest().sources.map((s) =>
          s.endpoint === "frankfurter.rates" ? source(s.endpoint, AS_OF - age) : s,
        ),
      });
    const stale = health(at(10 * DAY), AS_OF);
    expect(stale.status).toBe("stale");
    expect(stale.caches["fx-rates"]).toMatchObject({
      sourceStatus: "stale",
      healthy: false,
      mode: "cached-fallback",
      sourceAgeSeconds: 10 * DAY,
    });
    expect(statusAffecting(stale.warnings)).toHaveLength(1);
    expect(stale.warnings[0]).toMatch(/^fx-rates cache stale \(sets status stale\)/);
    const degraded = health(at(6 * DAY), AS_OF);
    expect(degraded.status).toBe("degraded");
    expect(degraded.caches["fx-rates"]).toMatchObject({
      sourceStatus: "degraded",
      healthy: true,
      mode: "cached-fallback",
    });
    const none = health(manifest({ sources: manifest().sources.filter((s) => s.endpoint !== "frankfurter.rates") }));
    expect(none.caches["fx-rates"]).toMatchObject({ sourceStatus: "none", healthy: false, ageSeconds: null });
    expect(none.status).toBe("stale");
  });

  it("generic caches: degraded past 8x their budget, stale past 12x", () => {
    expect(health(manifest(), AS_OF + 8 * 600).status).toBe("healthy");
    const d = health(manifest(), AS_OF + 9 * 600);
    expect(d.status).toBe("degraded");
    expect(d.caches.stablecoins.healthy).toBe(true);
    expect(d.caches["peg-summary"].healthy).toBe(true);
    const s = health(manifest(), AS_OF + 13 * 600);
    expect(s.status).toBe("stale");
    expect(s.caches.stablecoins.healthy).toBe(false);
    expect(s.caches["peg-summary"].healthy).toBe(true); // 7800 s of a 900 s budget: 8.7x, degraded
    expect(statusAffecting(s.warnings).map((w) => w.slice(0, 14))).toEqual(["caches stale (", "caches degrade"]);
  });

  it("a stale or missing stablecoin list snapshot is incomplete publication coverage → degraded", () => {
    const m = manifest({
      sources: manifest().sources.map((s) => (s.endpoint === "defillama.stablecoins" ? source(s.endpoint, null) : s)),
    });
    expect(health(m).status).toBe("degraded");
    const stale = manifest({
      sources: manifest().sources.map((s) =>
        s.endpoint === "defillama.stablecoins" ? source(s.endpoint, AS_OF - DAY, { status: "stale" }) : s,
      ),
    });
    expect(health(stale).status).toBe("degraded");
    expect(statusAffecting(health(stale).warnings)[0]).toMatch(/^stablecoin list snapshot stale/);
  });
});

describe("circuits (spec 2.8: one per upstream source)", () => {
  it("are derived from the manifest's sources when no live capture recorded them", () => {
    const m = manifest({
      sources: [
        source("defillama.stablecoins", AS_OF - 3600),
        source("defillama.stablecoincharts", AS_OF - 2 * DAY, { status: "stale" }),
        // the newest CoinGecko capture was rejected, after an older success
        source("coingecko.markets", AS_OF - DAY, {
          captures: [capture(AS_OF - 2 * DAY, 5), capture(AS_OF - DAY, 0, "payload failed schema at data")],
        }),
        // recorded after as-of: only its rows up to as-of were used
        source("alchemy.daily_prices", AS_OF + 30 * DAY),
        source("binance.klines", null),
      ],
    });
    expect(circuitsOf(m)).toEqual({
      alchemy: { state: "closed", consecutiveFailures: 0, lastSuccessAt: AS_OF },
      binance: { state: "closed", consecutiveFailures: 0, lastSuccessAt: null },
      coingecko: { state: "open", consecutiveFailures: 1, lastSuccessAt: AS_OF - 2 * DAY },
      defillama: { state: "closed", consecutiveFailures: 0, lastSuccessAt: AS_OF - 3600 },
    });
    expect(health(m).circuits).toEqual(circuitsOf(m));
  });

  it("use the states a live capture recorded (manifest.circuits) when present", () => {
    const recorded = { state: "half-open" as const, consecutiveFailures: 7, lastSuccessAt: AS_OF - 600 };
    const c = circuitsOf(manifest({ circuits: { coingecko: recorded } }));
    expect(c.coingecko).toEqual(recorded);
    expect(Object.keys(c)).toEqual(["alchemy", "binance", "coingecko", "defillama", "frankfurter", "onchain"]);
  });

  it("3 or more open circuit groups → degraded; circuits of one family are one group", () => {
    const open = { state: "open" as const, consecutiveFailures: 5, lastSuccessAt: AS_OF - DAY };
    // coingecko + alchemy (one family) + binance: 2 groups
    const two = health(manifest({ circuits: { coingecko: open, alchemy: open, binance: open } }));
    expect(two.status).toBe("healthy");
    expect(two.warnings.some((w) => w.startsWith("circuit groups open (no effect on status"))).toBe(true);
    const three = health(manifest({ circuits: { coingecko: open, alchemy: open, binance: open, frankfurter: open } }));
    expect(three.status).toBe("degraded");
    expect(statusAffecting(three.warnings)).toHaveLength(1);
    expect(three.warnings[0]).toMatch(/^circuit groups open \(sets status degraded\): binance .*, coingecko .*, ecb /);
  });

  it("circuit names and groups match each endpoint's declared source and lineage family", () => {
    for (const e of Object.values(ENDPOINTS)) {
      expect(circuitOf(e.key), e.key).toBe(e.source);
      // a circuit guards an upstream host: its group is the family of the host's own data; an endpoint
      // re-publishing another upstream's series (DefiLlama's price archive, family coingecko) shares its host's group
      const own = Object.values(ENDPOINTS).find((o) => o.source === e.source && o.lineage.derivedFrom === null);
      expect(circuitGroup(e.source), e.key).toBe(own ? own.lineage.family : e.lineage.family);
    }
  });
});

describe("state store", () => {
  const down = {
    state: "unavailable" as const,
    circuit: "open" as const,
    backend: "postgres" as const,
    reason: "timeout",
    lastOkAt: AS_OF - 120,
    lastFailureAt: AS_OF - 10,
  };

  it("an unavailable state store makes a fresh build degraded, with a warning naming the dependency, its breaker and a generic reason", () => {
    const h = health(manifest(), AS_OF + 60, { stateStore: down });
    expect(h.status).toBe("degraded");
    expect(h.stateStore).toEqual(down);
    expect(h.warnings[0]).toMatch(
      /^state store \(postgres\) unavailable \(sets status degraded\): timeout, circuit open; last ok /,
    );
  });

  it("is at least degraded: a stale build stays stale; an ok store changes nothing", () => {
    expect(health(manifest(), AS_OF + 13 * 600, { stateStore: down }).status).toBe("stale");
    const okStore = {
      state: "ok" as const,
      circuit: "closed" as const,
      backend: "pglite" as const,
      reason: null,
      lastOkAt: AS_OF,
      lastFailureAt: null,
    };
    const ok = health(manifest(), AS_OF + 60, { stateStore: okStore });
    expect(ok.status).toBe("healthy");
    expect(ok.stateStore).toEqual(okStore);
  });

  it("without a published build: stale, with the state store still reported", () => {
    const h = buildHealth(null, AS_OF, "replay", { stateStore: down });
    expect(h.status).toBe("stale");
    expect(h.caches).toEqual({});
    expect(h.warnings).toHaveLength(3);
    expect(h.warnings[2]).toMatch(/^messaging bot not configured/);
    expect(h.clock).toEqual({ mode: "replay", buildId: null, asOf: null });
  });
});

describe("telegramSummary (spec 2.8)", () => {
  const summary = {
    totalChats: 4,
    pendingDeliveries: 2,
    pendingDeliveryLifecycleStatus: "available" as const,
    pendingDeliveryBacklog: 1,
    lastDispatchAt: 1_800_000_000,
    lastDispatchStatus: "ok",
    safetyAlertSourceState: "ok" as const,
    safetyAlertSourceAgeSeconds: 60,
    safetyAlertsSuppressed: false,
    safetyAlertSourceGeneration: "ballast-safety-score-v1",
  };
  it("is null with a warning naming the 503 routes when no bot is configured; no effect on status", () => {
    const h = buildHealth({ manifest: manifest() }, AS_OF, "replay");
    expect(h.telegramSummary).toBeNull();
    expect(h.warnings.find((w) => w.startsWith("messaging bot not configured"))).toContain("/api/telegram-pulse");
    expect(buildHealth({ manifest: manifest() }, AS_OF, "replay", { telegram: summary }).status).toBe(h.status);
  });
  it("echoes the bot's summary, its wall-clock dispatch time shifted onto the clock in force", () => {
    const h = buildHealth({ manifest: manifest() }, AS_OF, "replay", { telegram: summary, wallNow: 1_800_000_100 });
    expect(h.telegramSummary).toEqual({ ...summary, lastDispatchAt: AS_OF - 100 });
    expect(h.warnings.some((w) => w.startsWith("messaging bot"))).toBe(false);
  });
  it("is null with a warning while the bot's store does not answer", () => {
    const h = buildHealth({ manifest: manifest() }, AS_OF, "replay", { telegram: "unavailable" });
    expect(h.telegramSummary).toBeNull();
    expect(h.warnings).toContain(
      "messaging bot state unavailable (no effect on status): its state store did not answer; telegramSummary is null until it does.",
    );
  });
});

describe("warnings say what they are and keep every manifest fact", () => {
  it("reports drops, reader skips, quality refusals, build notes and feeds ending before as-of", () => {
    const m = manifest({
      sources: [
        ...manifest().sources.filter(
          (s) => s.endpoint !== "defillama.stablecoins" && s.endpoint !== "coingecko.markets",
        ),
        source("defillama.stablecoins", AS_OF, { dropped: { "price-invalid": 1, "bucket-legacy-zero-absent": 31 } }),
        source("coingecko.markets", null),
        source("defillama.stablecoincharts", AS_OF - 769 * DAY, { status: "stale" }),
      ],
      readerDropped: { "some/file.csv": { "coin-name-unmapped": 4 } },
      qualityRejections: { peg_monitor: { "stuck-quote": 517 } },
      warnings: ["coin foo-unreviewed-1 published with a provisional registry record"],
    });
    const w = health(m).warnings.join("\n");
    expect(w).toContain("defillama.stablecoins 32 (bucket-legacy-zero-absent 31, price-invalid 1)");
    expect(w).toContain("some/file.csv 4 (coin-name-unmapped 4)");
    expect(w).toContain("peg_monitor quality rules refused input (no effect on status): stuck-quote 517");
    expect(w).toContain(
      "build note (no effect on status): coin foo-unreviewed-1 published with a provisional registry record",
    );
    expect(w).toContain("defillama.stablecoincharts 2023-07-31T00:00Z (769 days before as-of)");
    expect(w).toMatch(/without any capture at or before as-of \(no effect on status\): coingecko\.markets\./);
    expect(health(m).status).toBe("healthy");
  });
});

describe("on-chain sections (spec 2.8)", () => {
  const mintBurnInputs = {
    totalEvents: 10,
    latestEventTsBySymbol: { USDT: AS_OF - 60, USDP: AS_OF - 30 * DAY },
    latestHourlyTs: AS_OF - 3600,
  };
  /** A manifest whose on-chain source holds a recorded capture and, when `syncAt` is given, a live ledger capture observed then. */
  const withLedger = (syncAt: number | null) =>
    manifest({
      sources: [
        ...manifest().sources,
        source("onchain.events", syncAt ?? AS_OF - 400 * DAY, {
          captures: [
            { ...capture(AS_OF - 400 * DAY, 10), origin: "recorded" },
            ...(syncAt === null ? [] : [capture(syncAt, 5)]),
          ],
        }),
      ],
    });
  const blacklist = {
    totalEvents: 200,
    missingAmounts: 4,
    recentMissingAmounts: 1,
    recentWindowSec: 30 * DAY,
    missingRatio: 0.02,
  };

  it("mint/burn lane: fresh up to 60 min, degraded up to 90, stale beyond; a live lane sets the status", () => {
    const now = AS_OF + 60;
    const fresh = health(withLedger(now - 3600), now, { onchain: { blacklist: null, mintBurn: mintBurnInputs } });
    expect(fresh.mintBurn).toMatchObject({
      totalEvents: 10,
      latestEventTs: AS_OF - 60,
      majorStaleCount: 1,
      staleMajorSymbols: ["USDP"],
      sync: { freshnessStatus: "fresh", criticalLaneHealthy: true },
    });
    expect(fresh.status).toBe("healthy");
    const degraded = health(withLedger(now - 3601), now, { onchain: { blacklist: null, mintBurn: mintBurnInputs } });
    expect(must(degraded.mintBurn, "the mint/burn health block").sync.freshnessStatus).toBe("degraded");
    expect(degraded.status).toBe("degraded");
    const stale = health(withLedger(now - 5401), now, { onchain: { blacklist: null, mintBurn: mintBurnInputs } });
    expect(must(stale.mintBurn, "the mint/burn health block").sync).toMatchObject({
      freshnessStatus: "stale",
      criticalLaneHealthy: false,
    });
    expect(stale.status).toBe("stale");
    expect(statusAffecting(stale.warnings).some((w) => w.startsWith("mint/burn lane stale"))).toBe(true);
  });

  it("without a live ledger the lane is reported stale but leaves the status alone; blacklist gaps never escalate", () => {
    const h = health(withLedger(null), AS_OF + 60, { onchain: { blacklist, mintBurn: mintBurnInputs } });
    expect(must(h.mintBurn, "the mint/burn health block").sync).toMatchObject({
      lastSuccessfulSyncAt: null,
      freshnessStatus: "stale",
      criticalLaneHealthy: false,
    });
    expect(h.blacklist).toEqual(blacklist);
    expect(h.status).toBe("healthy");
    expect(h.warnings.some((w) => w.startsWith("freeze ledger amount gaps (no effect on status"))).toBe(true);
  });

  it("on-chain artifacts are reported in their sections, not as generic caches", () => {
    const old = AS_OF - 400 * DAY;
    const h = health(
      manifest({ files: [...manifest().files, file("blacklist", 900, old), file("mint-burn-flows", 900, old)] }),
    );
    expect(h.caches).not.toHaveProperty("blacklist");
    expect(h.caches).not.toHaveProperty("mint-burn-flows");
    expect(h.status).toBe("healthy");
  });
});

describe("cache keys spec 2.8 names", () => {
  const SPEC_KEYS = [
    "stablecoins",
    "stablecoin-charts",
    "usds-status",
    "fx-rates",
    "bluechip-ratings",
    "dex-liquidity",
    "yield-data",
    "dews",
  ];

  it("are always present, first and in the spec's order; unpublished optional ones are not-published without effect on status", () => {
    const h = health(manifest());
    expect(Object.keys(h.caches).slice(0, SPEC_KEYS.length)).toEqual(SPEC_KEYS);
    expect(Object.keys(h.caches)).toContain("peg-summary");
    for (const [key, artifact, maxAge] of [
      ["usds-status", "usds-status", 86400],
      ["bluechip-ratings", "bluechip-ratings", 43200],
      ["dex-liquidity", "dex-liquidity", 7200],
      ["yield-data", "yield-rankings", 3600],
    ] as const) {
      expect(h.caches[key], key).toMatchObject({
        ageSeconds: null,
        maxAge,
        healthy: false,
        sentinelValidationReason: "not-published",
        artifact,
      });
      expect(
        h.warnings.some((w) => w.startsWith(`not yet available (no effect on status): ${artifact} —`)),
        key,
      ).toBe(true);
    }
    expect(h.status).toBe("healthy");
    expect(statusAffecting(h.warnings)).toEqual([]);
  });

  it("dews is the stress-signals artifact and yield-data the yield rankings, each under one key only", () => {
    const m = manifest({
      files: [
        ...manifest().files,
        file("yield-rankings", 3600),
        file("yield-history", 3600),
        file("dex-liquidity", 7200, AS_OF - 600),
      ],
    });
    const h = health(m);
    expect(h.caches.dews).toMatchObject({
      ageSeconds: 60,
      maxAge: 3600,
      healthy: true,
      artifact: "stress-signals",
      sentinelValidationReason: null,
    });
    expect(h.caches["yield-data"]).toMatchObject({
      ageSeconds: 60,
      maxAge: 3600,
      healthy: true,
      artifact: "yield-rankings",
      availabilityMaxAge: 4 * 3600,
    });
    expect(h.caches["dex-liquidity"]).toMatchObject({ ageSeconds: 660, healthy: true, sentinelValidationReason: null });
    expect(h.caches).not.toHaveProperty("stress-signals");
    expect(h.caches).not.toHaveProperty("yield-rankings");
    expect(h.caches["yield-history"]).toMatchObject({ maxAge: 3600, availabilityMaxAge: 12 * 3600 }); // other yield artifacts keep the generic rule
    expect(h.status).toBe("healthy");
  });

  it("yield-data: degraded above 2x its budget and stale above 4x, where generic caches are still fresh", () => {
    const at = (age: number) =>
      manifest({
        files: [
          file("stablecoins", 600, AS_OF),
          file("stablecoin-charts", 3600, AS_OF),
          file("stress-signals", 3600, AS_OF),
          file("yield-rankings", 3600, AS_OF - age),
        ],
      });
    expect(health(at(2 * 3600), AS_OF).status).toBe("healthy");
    const d = health(at(2 * 3600 + 1), AS_OF);
    expect(d.status).toBe("degraded");
    expect(d.caches["yield-data"].healthy).toBe(true);
    expect(statusAffecting(d.warnings)).toEqual([
      expect.stringMatching(
        /^caches degraded \(sets status degraded\): yield-data \(yield-rankings\) 2 h old \(budget 60 min, 2x\/4x\)/,
      ),
    ]);
    const s = health(at(4 * 3600 + 1), AS_OF);
    expect(s.status).toBe("stale");
    expect(s.caches["yield-data"].healthy).toBe(false);
  });

  it("a required spec cache missing from the build (never in a real build) is stale: its routes answer 503", () => {
    const m = manifest({ files: manifest().files.filter((f) => f.artifact !== "stablecoin-charts") });
    const h = health(m);
    expect(h.caches["stablecoin-charts"]).toMatchObject({
      ageSeconds: null,
      healthy: false,
      sentinelValidationReason: "not-published",
    });
    expect(h.status).toBe("stale");
  });
});

describe("one clock: timestamp and every age in the body come from the same now", () => {
  const withLive = manifest({ sources: [...manifest().sources, source("onchain.events", AS_OF - 1800)] });
  const onchain = {
    blacklist: null,
    mintBurn: { totalEvents: 3, latestEventTsBySymbol: { USDT: AS_OF - 900 }, latestHourlyTs: AS_OF - 3600 },
  };

  /** Every `*age*` number of the body with its path. */
  function ages(v: unknown, path = ""): Record<string, number> {
    const out: Record<string, number> = {};
    if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === "number" && /age(sec|seconds)$/i.test(k)) out[`${path}.${k}`] = x;
        else Object.assign(out, ages(x, `${path}.${k}`));
      }
    }
    return out;
  }

  it("moving now by 1000 s moves timestamp and every age by exactly 1000 s", () => {
    const a = buildHealth({ manifest: withLive }, AS_OF + 60, "replay", { onchain });
    const b = buildHealth({ manifest: withLive }, AS_OF + 1060, "replay", { onchain });
    expect(b.timestamp - a.timestamp).toBe(1000);
    const before = ages(a),
      after = ages(b);
    // caches (site-data and fx-rates, ageSeconds and sourceAgeSeconds) and the mint/burn section
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining([
        ".caches.stablecoins.ageSeconds",
        ".caches.dews.ageSeconds",
        ".caches.fx-rates.ageSeconds",
        ".caches.fx-rates.sourceAgeSeconds",
        ".mintBurn.freshnessAgeSec",
      ]),
    );
    for (const [k, v] of Object.entries(before)) expect(after[k] - v, k).toBe(1000);
    expect(a.caches.stablecoins.ageSeconds).toBe(a.timestamp - AS_OF);
    expect(must(a.mintBurn, "the mint/burn health block").freshnessAgeSec).toBe(a.timestamp - (AS_OF - 900));
  });

  it("state store and recorder times (wall clock) are shifted onto the replay clock of timestamp", () => {
    const wallNow = Date.parse("2026-11-25T12:00:00Z") / 1000;
    const now = AS_OF + 600; // replay clock: as-of + 10 min
    const store = {
      state: "unavailable" as const,
      circuit: "half-open" as const,
      backend: "postgres" as const,
      reason: "connection refused",
      lastOkAt: wallNow - 90,
      lastFailureAt: wallNow - 30,
    };
    const recorder = {
      state: "unavailable" as const,
      lastError: "status history: record failed: boom",
      lastRecordedAt: wallNow - 120,
      pendingObservations: 2,
      intervalSec: 60,
    };
    const h = buildHealth({ manifest: manifest() }, now, "replay", {
      stateStore: store,
      statusHistory: recorder,
      wallNow,
    });
    expect(h.timestamp).toBe(now);
    expect(h.stateStore).toEqual({ ...store, lastOkAt: now - 90, lastFailureAt: now - 30 });
    expect(h.statusHistory).toEqual({ ...recorder, lastRecordedAt: now - 120 });
    expect(h.warnings[0]).toContain(
      `last ok ${new Date((now - 90) * 1000).toISOString().slice(0, 16)}Z (90 s before now)`,
    );
    // a failing recorder is reported, never a status change; the state store still sets degraded
    expect(h.status).toBe("degraded");
    expect(h.warnings.find((w) => w.startsWith("status history recording failing (no effect on status)"))).toContain(
      "2 observation(s) kept in memory",
    );
    expect(buildHealth({ manifest: manifest() }, now, "replay", { statusHistory: recorder, wallNow }).status).toBe(
      "healthy",
    );
  });
});

describe("causes of the status (what the status history records)", () => {
  it("healthy: none; each finding names its cause and whether it has public impact", () => {
    expect(assessHealth({ manifest: manifest() }, AS_OF + 60, "wall").causes).toEqual([]);
    const open = { state: "open" as const, consecutiveFailures: 5, lastSuccessAt: AS_OF - DAY };
    const m = manifest({
      circuits: { coingecko: open, binance: open, frankfurter: open },
      sources: manifest().sources.map((s) =>
        s.endpoint === "defillama.stablecoins"
          ? source(s.endpoint, AS_OF - DAY, { status: "stale" })
          : s.endpoint === "frankfurter.rates"
            ? source(s.endpoint, AS_OF - 6 * DAY)
            : s,
      ),
      skippedCaptures: [{ file: "x.csv", endpoint: "coingecko.market_chart", reason: "header-only" }],
    });
    const { health: h, causes } = assessHealth({ manifest: m }, AS_OF + 13 * 600, "wall", {
      stateStore: {
        state: "unavailable",
        circuit: "open",
        backend: "postgres",
        reason: "timeout",
        lastOkAt: null,
        lastFailureAt: null,
      },
    });
    expect(h.status).toBe("stale");
    const byCode = Object.fromEntries(causes.map((c) => [c.code, [c.status, c.publicImpact]]));
    expect(byCode).toEqual({
      "db-unhealthy": ["degraded", true],
      "cache:stablecoins": ["stale", true],
      "cache:peg-summary": ["degraded", true],
      "fx-cached-fallback": ["degraded", true],
      "publication-coverage:list-snapshot": ["degraded", false],
      "publication-coverage:skipped-captures": ["degraded", false],
      "circuit-groups-open": ["degraded", true],
    });
    for (const c of causes) expect(c.detail.length).toBeGreaterThan(0);
  });

  it("no build: no-build (public); a stale live mint/burn lane: mint-burn-lane (public)", () => {
    expect(assessHealth(null, AS_OF, "wall").causes).toEqual([
      expect.objectContaining({ code: "no-build", status: "stale", publicImpact: true }),
    ]);
    const m = manifest({ sources: [...manifest().sources, source("onchain.events", AS_OF - 7200)] });
    const { causes } = assessHealth({ manifest: m }, AS_OF, "wall", {
      onchain: {
        blacklist: null,
        mintBurn: { totalEvents: 1, latestEventTsBySymbol: { USDT: AS_OF }, latestHourlyTs: AS_OF },
      },
    });
    expect(causes).toEqual([expect.objectContaining({ code: "mint-burn-lane", status: "stale", publicImpact: true })]);
  });

  it("public impact by cause family (spec 2.9 list); unknown families have none", () => {
    expect(causePublicImpact("cache:anything")).toBe(true);
    expect(causePublicImpact("publication-coverage:list-snapshot")).toBe(false);
    expect(causePublicImpact("something-new")).toBe(false);
  });
});
