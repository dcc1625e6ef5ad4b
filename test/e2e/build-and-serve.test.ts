import { readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../build/captures.ts";
import { Db } from "../../build/duckdb.ts";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { startServer } from "../../api/server.ts";
import { buildRecorded, CAPTURE_DIR, RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { freePort } from "../helpers/redis-server.ts";

let dir: string;
let manifest: BuildManifest;
let base: string;
let key: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ dir, manifest } = await buildRecorded());
  const PORT = await freePort(); // not a fixed port: another run of this suite may hold it
  const s = await startServer({ PORT, HOST: "127.0.0.1", BALLAST_DATA_DIR: dir, CLOCK: "auto" }, { devKey: true });
  key = must(s.devKey, "the server's development key");
  close = s.close;
  base = `http://127.0.0.1:${PORT}`;
});
afterAll(async () => {
  await close?.();
});

const get = (path: string, withKey = true) => fetch(`${base}${path}`, { headers: withKey ? { "X-API-Key": key } : {} });

describe("end to end: recorded capture → build → running API", () => {
  it("lists every recorded coin with USD supply summing to the capture's own total within 0.5%", async () => {
    const res = await get("/api/stablecoins");
    expect(res.status).toBe(200);
    const body = await res.json();
    const raw = JSON.parse(
      readFileSync(join(CAPTURE_DIR, "zacheryglass-stablecoinwatch/defillama_raw_output.json"), "utf8"),
    );
    const captureTotal = raw.peggedAssets.reduce(
      (s: number, a: { circulating: { peggedUSD?: number } }) => s + (a.circulating.peggedUSD ?? 0),
      0,
    );
    const ours = body.peggedAssets.reduce(
      (s: number, a: { circulating: { peggedUSD?: number } }) => s + (a.circulating.peggedUSD ?? 0),
      0,
    );
    expect(body.peggedAssets).toHaveLength(raw.peggedAssets.length);
    expect(Math.abs(ours / captureTotal - 1)).toBeLessThan(0.005);
    expect(body._meta.status).toBe("fresh");
    const usdt = body.peggedAssets.find((a: { id: string }) => a.id === "usdt-tether");
    expect(Object.keys(usdt.chainCirculating).length).toBeGreaterThan(10);
    expect(usdt.chainCirculating.Tron.current).toBeGreaterThan(1e10);
  });

  it("values supply with one rule: no source-switch sawtooth in USDT, USDC or the listed total", async () => {
    type Pt = { date: number; usd: number; source?: string };
    /** Days where supply jumps ≥ 0.5% and straight back ≥ 0.5% while the source changes (a market move keeps its source). */
    const sawtooth = (points: Pt[]) => {
      const out: string[] = [];
      for (let i = 1; i + 1 < points.length; i++) {
        const [a, b, c] = [points[i - 1], points[i], points[i + 1]];
        if (b.date - a.date > 86400 * 31 || c.date - b.date > 86400 * 31) continue;
        if (b.source !== undefined && b.source === a.source && b.source === c.source) continue;
        const d1 = b.usd / a.usd - 1,
          d2 = c.usd / b.usd - 1;
        if (Math.abs(d1) >= 0.005 && Math.abs(d2) >= 0.005 && Math.sign(d1) !== Math.sign(d2))
          out.push(new Date(b.date * 1000).toISOString().slice(0, 10));
      }
      return out;
    };
    const recent = Date.parse("2025-08-01") / 1000;
    for (const id of ["usdt-tether", "usdc-circle"]) {
      const hist = (await (await get(`/api/supply-history?stablecoin=${id}`)).json()) as {
        date: number;
        circulatingUsd: number | null;
        source: string;
      }[];
      const pts = hist.flatMap((p) =>
        p.date >= recent && p.circulatingUsd !== null
          ? [{ date: p.date, usd: p.circulatingUsd, source: p.source }]
          : [],
      );
      expect(pts.length).toBeGreaterThan(25);
      expect(new Set(pts.map((p) => p.source)).size, `${id} mixes sources`).toBeGreaterThan(1);
      expect(sawtooth(pts), id).toEqual([]);
    }
    const charts = (await (await get("/api/stablecoin-charts")).json()) as {
      date: number;
      aggregateUniverse?: string;
      totalCirculatingUSD: { total?: number | null };
    }[];
    const listed = charts
      .filter((p) => p.aggregateUniverse === "ballast-listed" && typeof p.totalCirculatingUSD.total === "number")
      .map((p) => ({ date: p.date, usd: p.totalCirculatingUSD.total as number }));
    expect(listed.length).toBeGreaterThanOrEqual(3);
    expect(sawtooth(listed)).toEqual([]);
  });

  it("serves USDC history back to 2022 and charts from 2020-12", async () => {
    const usdc = await (await get("/api/stablecoin/usdc-circle")).json();
    expect(usdc.tokens[0].date).toBeLessThan(Date.parse("2022-01-01") / 1000);
    const charts = await (await get("/api/stablecoin-charts")).json();
    expect(new Date(charts[0].date * 1000).toISOString().slice(0, 7)).toBe("2020-12");
  });

  it("requires a key on data routes but not on health", async () => {
    expect((await get("/api/stablecoins", false)).status).toBe(401);
    const h = await get("/api/health", false);
    expect(h.status).toBe(200);
    const health = await h.json();
    expect(health.clock).toMatchObject({ mode: "replay", asOf: RECORDED_AS_OF });
    expect(health.caches.stablecoins.healthy).toBe(true);
  });

  it("publishes datasets whose latest file is the same bytes as the newest dated file, without a key", async () => {
    const latest = await get("/datasets/top-stablecoins/latest.csv", false);
    const dated = await get("/datasets/top-stablecoins/2025-09-07.csv", false);
    expect(latest.headers.get("access-control-allow-origin")).toBe("*");
    const [a, b] = [await latest.text(), await dated.text()];
    expect(a).toBe(b);
    expect(a.split("\n")[0]).toMatch(
      /^# ballast dataset top-stablecoins as-of 2025-09-07T00:00:00Z methodology \S+ inputs sha256:[0-9a-f]{64}$/,
    );
    expect(a.split("\n")[1]).toBe("id,symbol,name,pegType,pegMechanism,price,circulatingUsd,chainCount,chains");
    expect((await get("/sheets/top-stablecoins.csv", false)).status).toBe(200);
    const cemetery = await (await get("/datasets/stablecoin-cemetery.json", false)).json();
    expect(
      cemetery.find(
        (c: { symbol: string; deathDate: string | null }) => c.symbol === "UST" && c.deathDate?.startsWith("2022-05"),
      ),
    ).toBeTruthy();
    expect((await get("/datasets/top-stablecoins/2024-01-01.csv", false)).status).toBe(404);
  });

  it("publishes depeg-history: 90-day window of event starts ending on the file date, newest first", async () => {
    const csv = await (await get("/datasets/depeg-history/latest.csv", false)).text();
    expect(csv).toBe(await (await get("/datasets/depeg-history/2025-09-07.csv", false)).text());
    const [comment, header, ...lines] = csv.trim().split("\n");
    expect(comment.startsWith("# ballast dataset depeg-history ")).toBe(true);
    expect(header).toBe(
      "id,stablecoinId,symbol,direction,peakDeviationBps,startedAtISO,endedAtISO,durationSec,startPrice,peakPrice,recoveryPrice,pegReference,source",
    );
    const rows = (await (await get("/datasets/depeg-history/latest.json", false)).json()) as {
      id: string;
      startedAtISO: string;
    }[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBe(lines.length);
    const windowStart = Date.parse("2025-09-07T00:00:00Z") - 89 * 86400_000;
    for (const r of rows) {
      expect(typeof r.id).toBe("string");
      expect(Date.parse(r.startedAtISO)).toBeGreaterThanOrEqual(windowStart);
    }
    const starts = rows.map((r) => Date.parse(r.startedAtISO));
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
    expect((await get("/sheets/depeg-history.csv", false)).status).toBe(200);
  });

  it("publishes a researchers' DuckDB file with the marts", async () => {
    const db = await Db.open(join(dir, "builds", manifest.buildId, "ballast.duckdb"), { access_mode: "READ_ONLY" });
    const [row] = await db.all<{ n: number }>("select count(*)::integer as n from stablecoins");
    db.close();
    expect(row.n).toBe(289);
  });

  it("keeps the previous build serving when a build fails (a duplicated registry record)", async () => {
    const before = readFileSync(join(dir, "latest.json"), "utf8");
    const reg = loadRegistry();
    // (an unknown coin no longer fails a build: it is published as unreviewed; a duplicated record does)
    const usdt = must(
      reg.coins.find((c) => c.id === "usdt-tether"),
      "usdt-tether in the registry",
    );
    const broken = { ...reg, coins: [...reg.coins, { ...usdt }] };
    await expect(
      runBuild({
        asOf: RECORDED_AS_OF + 60,
        captureDir: CAPTURE_DIR,
        sink: new FsSink(dir),
        warehousePath: null,
        registry: broken,
      }),
    ).rejects.toThrow("registry: coin id usdt-tether appears more than once");
    expect(readFileSync(join(dir, "latest.json"), "utf8")).toBe(before);
    expect((await get("/api/stablecoin-summary/usdt-tether")).status).toBe(200);
  }, 60_000); // the registry is checked before any model runs

  it("publishes every listed file with its sha256, and .br/.gz siblings (named in encodings) that decode to it", () => {
    const buildDir = join(dir, "builds", manifest.buildId);
    const compressible = manifest.files.filter((f) => /\.(json|csv|ndjson)$/.test(f.path));
    expect(compressible.length).toBeGreaterThan(900);
    for (const f of manifest.files) {
      const bytes = readFileSync(join(buildDir, f.path));
      expect(sha256(bytes), f.path).toBe(f.sha256);
      if (!/\.(json|csv|ndjson)$/.test(f.path)) {
        expect(f.encodings).toBeUndefined();
        continue;
      }
      expect(f.encodings).toEqual(["br", "gzip"]);
      expect(brotliDecompressSync(readFileSync(join(buildDir, `${f.path}.br`))).equals(bytes), `${f.path}.br`).toBe(
        true,
      );
      expect(gunzipSync(readFileSync(join(buildDir, `${f.path}.gz`))).equals(bytes), `${f.path}.gz`).toBe(true);
    }
    for (const fmt of ["csv", "json", "ndjson", "parquet"]) {
      const key = `datasets/top-stablecoins/2025-09-07.${fmt}`;
      const bytes = readFileSync(join(dir, key));
      expect(bytes.equals(readFileSync(join(buildDir, key)))).toBe(true);
      if (fmt === "parquet") continue; // stored as is (already compressed)
      expect(brotliDecompressSync(readFileSync(join(dir, `${key}.br`))).equals(bytes)).toBe(true);
      expect(gunzipSync(readFileSync(join(dir, `${key}.gz`))).equals(bytes)).toBe(true);
    }
  });

  it("is reproducible: a second build with the same as-of gives byte-identical artifacts and compressed siblings", async () => {
    const second = await buildRecorded("ballast-repro-", { fresh: true }); // another process's build, same inputs
    const strip = (m: BuildManifest) =>
      m.files.filter((f) => f.path !== "ballast.duckdb").map((f) => `${f.path} ${f.sha256}`);
    expect(second.manifest.buildId).toBe(manifest.buildId);
    expect(strip(second.manifest)).toEqual(strip(manifest));
    const parquet = manifest.files.filter((f) => f.path.endsWith(".parquet"));
    expect(parquet.length).toBe(7); // every dataset topic: DuckDB's parquet writer is byte-stable on one thread
    for (const f of parquet)
      expect(
        readFileSync(join(second.dir, "builds", manifest.buildId, f.path)).equals(
          readFileSync(join(dir, "builds", manifest.buildId, f.path)),
        ),
        f.path,
      ).toBe(true);
    const manifestBytes = (d: string) => readFileSync(join(d, "builds", manifest.buildId, "manifest.json"));
    const withoutDuckdb = (m: BuildManifest) => ({ ...m, files: m.files.filter((f) => f.path !== "ballast.duckdb") });
    expect(withoutDuckdb(JSON.parse(manifestBytes(second.dir).toString()))).toEqual(
      withoutDuckdb(JSON.parse(manifestBytes(dir).toString())),
    );
    const encoded = manifest.files.filter((x) => x.encodings);
    expect(encoded.length).toBeGreaterThan(900);
    for (const f of encoded) {
      for (const ext of [".br", ".gz"]) {
        const key = join("builds", manifest.buildId, `${f.path}${ext}`);
        expect(sha256(readFileSync(join(second.dir, key))), key).toBe(sha256(readFileSync(join(dir, key))));
      }
    }
  });
});
