import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsSink } from "../../build/sinks/fs.ts";
import {
  backfillSnapshots,
  type BackfillStep,
  daysBetween,
  snapshotAsOf,
  verifySnapshot,
} from "../../build/snapshots.ts";
import type { z } from "zod";
import type { Health } from "../../api/health.ts";
import type { DigestArchiveSchema } from "../../site-data/daily-digest.ts";
import {
  type Snapshot,
  type SnapshotIndexPageSchema,
  type SnapshotProjectionSchema,
  SnapshotSchema,
} from "../../site-data/snapshot.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { serveDir } from "../helpers/served-build.ts";

// Dated snapshots (issue 18 Deliver 1): two days of the USDC/SVB week backfilled from the recorded data,
// served, paged, projected and rebuilt byte for byte.
let dir: string;
let steps: BackfillStep[];
let api: Awaited<ReturnType<typeof serveDir>>;
beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  dir = mkdtempSync(join(tmpdir(), "ballast-snapshots-"));
  steps = await backfillSnapshots("2023-03-11", "2023-03-12", { captureDir: CAPTURE_DIR, sink: new FsSink(dir) });
  api = await serveDir(dir, "snapshots");
});
afterAll(async () => {
  await api?.close();
});

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
type IndexPage = z.infer<typeof SnapshotIndexPageSchema>;
/** The JSON of an error answer. */
type ErrorBody = { error: string };

describe("backfill", () => {
  it("days are inclusive UTC days, and a snapshot is as of its day's close (the next 00:00 UTC)", () => {
    expect(daysBetween("2023-02-27", "2023-03-02")).toEqual(["2023-02-27", "2023-02-28", "2023-03-01", "2023-03-02"]);
    expect(daysBetween("2023-02-01", "2023-03-31")).toHaveLength(59);
    expect(new Date(snapshotAsOf("2023-03-11") * 1000).toISOString()).toBe("2023-03-12T00:00:00.000Z");
    expect(() => daysBetween("2023-03-12", "2023-03-11")).toThrow("before --from");
  });

  it("builds one snapshot per day; a second run skips the published days and rewrites nothing", async () => {
    expect(steps.map((s) => [s.day, s.outcome])).toEqual([
      ["2023-03-11", "built"],
      ["2023-03-12", "built"],
    ]);
    const before = readFileSync(join(dir, "snapshots/2023-03-11.json"));
    const again = await backfillSnapshots("2023-03-11", "2023-03-12", {
      captureDir: CAPTURE_DIR,
      sink: new FsSink(dir),
    });
    expect(again.map((s) => s.outcome)).toEqual(["skipped", "skipped"]);
    expect(readFileSync(join(dir, "snapshots/2023-03-11.json")).equals(before)).toBe(true);
  });

  it("rebuilding a day gives the same sha256 (verify-snapshot)", async () => {
    const v = await verifySnapshot("2023-03-11", { captureDir: CAPTURE_DIR, sink: new FsSink(dir) });
    expect(v).toMatchObject({ identical: true, differences: [], digest: { identical: true } });
    expect(v.storedSha256).toBe(sha(readFileSync(join(dir, "snapshots/2023-03-11.json"))));
    expect(v.digest.storedSha256).toBe(sha(readFileSync(join(dir, "digests/2023-03-11.json"))));
    expect(v.chain).toMatchObject({ ok: true, rows: 2, problems: [] });
    expect(v.chain.head?.snapshotDate).toBe("2023-03-12");
  });

  it("verify-snapshot of a later day reports a past day whose stored digest was edited (issue 29)", async () => {
    const key = join(dir, "digests/2023-03-11.json");
    const original = readFileSync(key);
    const digest = JSON.parse(original.toString("utf8")) as { headline: string };
    writeFileSync(key, `${JSON.stringify({ ...digest, headline: `${digest.headline} (edited)` })}\n`);
    try {
      const v = await verifySnapshot("2023-03-12", { captureDir: CAPTURE_DIR, sink: new FsSink(dir) });
      expect(v.identical).toBe(true); // the day rebuilt is intact
      expect(v.chain.ok).toBe(false);
      expect(v.chain.problems[0]).toMatchObject({ date: "2023-03-11", file: "digests/2023-03-11.json" });
      expect(v.chain.problems).toHaveLength(1);
    } finally {
      writeFileSync(key, original);
    }
  });
});

describe("the 2023-03-11 snapshot", () => {
  const snapshot = () => SnapshotSchema.parse(JSON.parse(readFileSync(join(dir, "snapshots/2023-03-11.json"), "utf8")));

  it("names its build, methodology versions and every input capture with its sha256", () => {
    const s = snapshot();
    expect(s.buildId).toMatch(/^20230312T0000Z-[0-9a-f]{7}$/);
    expect(s.methodologyVersions.depeg).toMatch(/^ballast-depeg-v\d+$/);
    const klines = must(
      s.inputs.find((i) => i.path === "binance-vision-usdc-svb-2023/USDCUSDT-1m-2023-03-11.csv"),
      "the 2023-03-11 USDC klines input",
    );
    expect(klines.sha256).toBe(sha(readFileSync(join(CAPTURE_DIR, klines.path))));
    expect(s.inputs.every((i) => i.path !== "binance-vision-usdc-svb-2023/USDCUSDT-1m-2023-03-13.csv")).toBe(true);
  });

  it("shows USDC's SVB incident, below peg, started that day and open at its close", () => {
    const usdc = snapshot().depegIncidents.filter((e) => e.stablecoinId === "usdc-circle");
    expect(usdc).toHaveLength(1);
    expect(usdc[0].direction).toBe("below");
    expect(new Date(usdc[0].startedAt * 1000).toISOString().slice(0, 10)).toBe("2023-03-11");
    expect(usdc[0].endedAt).toBeNull();
    expect(usdc[0].peakDeviationBps).toBeLessThan(-500);
  });

  it("says which sections had no input that day instead of inventing them, and which were thin", () => {
    const s = snapshot();
    expect(s.unavailable.liquidity).toBe("no DEX pool capture observed by this day");
    expect(s.liquidity).toEqual([]);
    // Thin sections name their coverage. Recorded inputs of that day: per-chain history exists for USDC
    // only (check-sked stablecoin_USDC_circulating_by_chain.csv); supply for USDT, USDC (CoinGecko market
    // caps, DefiLlama history) and DAI (market-cap scrape): 3 of the 16 listed coins.
    expect(s.stablecoins).toHaveLength(16);
    const withSupply = s.stablecoins.filter((c) => c.circulatingUsd !== null).map((c) => c.symbol);
    const withChains = s.stablecoins.filter((c) => c.chains.length > 0).map((c) => c.symbol);
    expect(withSupply.sort()).toEqual(["DAI", "USDC", "USDT"]);
    expect(withChains).toEqual(["USDC"]);
    expect(s.coverage).toMatchObject({
      price: { covered: 16, of: 16 },
      supply: { covered: 3, of: 16 },
      chains: { covered: 1, of: 16, coins: ["usdc-circle"] },
    });
    expect(s.unavailable.supply).toMatch(/^3 of 16 listed coins have a circulating supply \(/);
    expect(s.unavailable.chains).toMatch(/^1 of 16 listed coins have a per-chain supply breakdown \(USDC\)/);
    expect(Object.keys(s.unavailable).sort()).toEqual(["chains", "liquidity", "supply"]); // price covers 16 of 16
  });
});

describe("snapshot routes", () => {
  it("the index pages newest first with a keyset cursor", async () => {
    const first = await api.get<IndexPage>("/api/snapshots/index?limit=1");
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("public, s-maxage=86400, max-age=3600");
    expect(first.body.snapshots.map((r) => r.snapshotDate)).toEqual(["2023-03-12"]);
    expect(first.body.pagination).toEqual({ limit: 1, hasMore: true, nextCursor: "2023-03-12" });
    const second = await api.get<IndexPage>(`/api/snapshots/index?limit=1&cursor=${first.body.pagination.nextCursor}`);
    expect(second.body.snapshots.map((r) => r.snapshotDate)).toEqual(["2023-03-11"]);
    expect(second.body.pagination).toEqual({ limit: 1, hasMore: false, nextCursor: null });
    expect(second.body.snapshots[0].contentHash).toBe(sha(readFileSync(join(dir, "snapshots/2023-03-11.json"))));
  });

  it("the index rejects a bad limit or cursor, naming it", async () => {
    expect((await api.get<ErrorBody>("/api/snapshots/index?limit=501")).body.error).toMatch(/limit/);
    expect((await api.get("/api/snapshots/index?cursor=2023-3-1")).status).toBe(400);
  });

  it("{date}.json serves the stored bytes with the immutable profile and ETag = sha256; If-None-Match gives 304", async () => {
    const stored = readFileSync(join(dir, "snapshots/2023-03-11.json"));
    const res = await api.req("/api/snapshots/2023-03-11.json");
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(stored)).toBe(true);
    expect(res.headers.get("cache-control")).toBe("public, s-maxage=31536000, max-age=31536000, immutable");
    expect(res.headers.get("etag")).toBe(`"${sha(stored)}"`);
    const cached = await api.app.request("/api/snapshots/2023-03-11.json", {
      headers: { "X-API-Key": api.token, "If-None-Match": `"${sha(stored)}"` },
    });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe("");
  });

  it("400 for an invalid date, 404 for a day without a snapshot, 500 for a stored payload that fails its schema", async () => {
    expect((await api.get("/api/snapshots/2023-02-30.json")).status).toBe(400);
    expect((await api.get("/api/snapshots/2023-03-11")).status).toBe(400);
    expect((await api.get("/api/snapshots/2023-03-13.json")).status).toBe(404);
    mkdirSync(join(dir, "snapshots"), { recursive: true });
    writeFileSync(join(dir, "snapshots/2023-03-14.json"), '{"version":1,"snapshotDate":"2023-03-14"}');
    const bad = await api.get<ErrorBody>("/api/snapshots/2023-03-14.json");
    expect(bad.status).toBe(500);
    expect(bad.body.error).toBe("Snapshot payload corrupted: 2023-03-14");
    // health names the corrupt stored payload until a later read passes
    const warned = (await api.get<Health>("/api/health")).body.warnings.filter((w) =>
      w.startsWith("stored dated payloads fail their schema"),
    );
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("snapshots/2023-03-14.json");
  });

  // Issue 30 item 3: the schema alone cannot tell an edited snapshot; its index row's contentHash can.
  it("an edited snapshot that still fits the schema is refused (500), never served immutable", async () => {
    const path = join(dir, "snapshots/2023-03-12.json");
    const stored = readFileSync(path);
    const edited = JSON.parse(stored.toString("utf8")) as Snapshot;
    edited.stablecoins[0].price = 1.2345;
    expect(SnapshotSchema.safeParse(edited).success).toBe(true);
    try {
      writeFileSync(path, JSON.stringify(edited));
      for (const url of [
        "/api/snapshots/2023-03-12.json",
        `/api/snapshot/2023-03-12/stablecoin/${edited.stablecoins[0].id}`,
      ]) {
        const res = await api.req(url);
        expect([res.status, res.headers.get("cache-control")]).toEqual([500, "no-store"]);
        expect(((await res.json()) as ErrorBody).error).toBe("Snapshot payload corrupted: 2023-03-12");
      }
      const warned = (await api.get<Health>("/api/health")).body.warnings.filter((w) =>
        w.startsWith("stored dated payloads fail their schema"),
      );
      expect(warned[0]).toContain("snapshots/2023-03-12.json");
    } finally {
      writeFileSync(path, stored);
    }
    expect((await api.req("/api/snapshots/2023-03-12.json")).status).toBe(200);
  });

  it("the projection of usdc-circle carries its row, report card, PSI and DEWS, with ETag <sha256>-<id>", async () => {
    const res = await api.get<z.infer<typeof SnapshotProjectionSchema>>(
      "/api/snapshot/2023-03-11/stablecoin/usdc-circle",
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      snapshotDate: "2023-03-11",
      stablecoinId: "usdc-circle",
      stablecoin: { id: "usdc-circle", symbol: "USDC" },
    });
    expect(res.body.stablecoin.price).toBeLessThan(0.99);
    expect(res.body.scores.reportCard?.id).toBe("usdc-circle");
    expect(res.body.scores.psi?.score).toBeGreaterThanOrEqual(0);
    expect(res.body.scores.dews?.stablecoinId).toBe("usdc-circle");
    expect(res.body.scores.liquidity).toBeNull();
    expect(res.headers.get("etag")).toBe(`"${sha(readFileSync(join(dir, "snapshots/2023-03-11.json")))}-usdc-circle"`);
    expect((await api.get("/api/snapshot/2023-03-11/stablecoin/no-such-coin")).status).toBe(404);
    expect((await api.get("/api/snapshot/2023-13-11/stablecoin/usdc-circle")).status).toBe(400);
  });
});

describe("dated digests and DuckDB files", () => {
  it("/api/digest-snapshot?date=2023-03-11 names the USDC and DAI incidents opened that day, and the PSI band change", async () => {
    const res = await api.req("/api/digest-snapshot?date=2023-03-11");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, s-maxage=86400, max-age=3600");
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(readFileSync(join(dir, "digests/2023-03-11.json")))).toBe(true);
    const d = JSON.parse(bytes.toString("utf8"));
    expect(d).toMatchObject({
      date: "2023-03-11",
      edition: "daily",
      windowStart: Date.parse("2023-03-11T00:00:00Z") / 1000,
      windowEnd: Date.parse("2023-03-12T00:00:00Z") / 1000,
    });
    const opened = d.depegIncidents.opened.map((i: { stablecoinId: string }) => i.stablecoinId);
    expect(opened).toEqual(expect.arrayContaining(["usdc-circle", "dai-sky"]));
    for (const i of d.depegIncidents.opened) {
      // an edition lists the incidents confirmed in its window (their start may be backdated)
      expect(i.startConfirmedAt).toBeGreaterThan(d.windowStart);
      expect(i.startConfirmedAt).toBeLessThanOrEqual(d.windowEnd);
      expect(i.startedAt).toBeLessThanOrEqual(i.startConfirmedAt);
      expect(i.endedAt).toBeNull(); // as of the day's close both were still open
    }
    expect(d.headline).toMatch(/USDC -\d+ bps/);
    expect(d.headline).toMatch(/DAI -\d+ bps/);
    expect(d.stabilityIndex).toMatchObject({ date: "2023-03-11", previousBand: "BEDROCK", bandChanged: true });
    expect(d.supply.changeUsd).toBeCloseTo(d.supply.totalUsd - d.supply.previousTotalUsd, 0);
    expect(d.supply.basis).toBe("circulating-usd-pegs-at-par");
    expect(d.supply.marketValue.changeUsd).toBeCloseTo(
      d.supply.marketValue.totalUsd - d.supply.marketValue.previousTotalUsd,
      0,
    );
  });

  it("digest-snapshot: 400 for a bad date, 404 for a day without a digest", async () => {
    const bad = await api.get<ErrorBody>("/api/digest-snapshot?date=2023-02-30");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/date/);
    expect((await api.get("/api/digest-snapshot")).status).toBe(400);
    const none = await api.get<ErrorBody>("/api/digest-snapshot?date=2023-03-10");
    expect(none.status).toBe(404);
    expect(none.body.error).toBe("No digest found for this date");
    mkdirSync(join(dir, "digests"), { recursive: true });
    writeFileSync(join(dir, "digests/2023-03-15.json"), "{not json");
    const corrupt = await api.get<ErrorBody>("/api/digest-snapshot?date=2023-03-15");
    expect([corrupt.status, corrupt.body.error]).toEqual([500, "Digest payload corrupted: 2023-03-15"]);
  });

  it("the archive lists both editions newest first with their content hashes", async () => {
    const res = await api.get<z.infer<typeof DigestArchiveSchema>>("/api/digest-archive");
    expect(res.status).toBe(200);
    expect(res.body.digests.map((r) => r.date)).toEqual(["2023-03-12", "2023-03-11"]);
    const d11 = res.body.digests[1];
    expect(d11.contentHash).toBe(sha(readFileSync(join(dir, "digests/2023-03-11.json"))));
    expect(d11.depegIncidentsOpened).toBeGreaterThanOrEqual(2);
    expect(d11.stabilityIndexBandChanged).toBe(true);
  });

  it("each snapshot day publishes a ballast.duckdb a researcher can open, holding nothing after the day's close", async () => {
    const res = await api.app.request("/snapshots/2023-03-11/ballast.duckdb");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, s-maxage=31536000, max-age=31536000, immutable");
    const file = join(dir, "downloaded.duckdb");
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const db = await DuckDBInstance.create(file, { access_mode: "READ_ONLY" });
    const conn = await db.connect();
    const rows = (
      await conn.runAndReadAll("select count(*)::integer as n, max(started_at)::integer as newest from depeg_events")
    ).getRowObjectsJson()[0];
    conn.closeSync();
    db.closeSync();
    expect(Number(rows.n)).toBeGreaterThan(0);
    expect(Number(rows.newest)).toBeLessThanOrEqual(snapshotAsOf("2023-03-11"));
    expect((await api.app.request("/snapshots/2023-03-13/ballast.duckdb")).status).toBe(404);
    expect((await api.app.request("/snapshots/2023-3-13/ballast.duckdb")).status).toBe(400);
  });
});
