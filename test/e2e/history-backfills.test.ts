import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadBuildConfig } from "../../build/config.ts";
import { must } from "../helpers/must.ts";
import { type HistoryReplay, listCoin, type OpsLane, publishFakeBuild, startOpsLane } from "../helpers/ops.ts";
import type { CapturedHistory } from "../../build/backfill-history.ts";

// Issue 31 item 1: backfill-depegs, backfill-supply-history and backfill-cg-prices are real jobs. Each
// captures the selected coin's history through the live clients (here: local servers replaying the
// recorded USDC payloads of 2023-03-10..12) into the data dir's live capture area with its provenance,
// then runs the dated-snapshot backfill over the captured window from the series' first published day on:
// published days are not rewritten, a missing one is built, days before the series are not built. A bad or empty filter is a 400 before any job starts.
const DAYS = ["2023-03-10", "2023-03-11", "2023-03-12"];

let lane: OpsLane;
let replay: HistoryReplay;
let dataDir: string;
const published: Record<string, { bytes: string; mtimeMs: number }> = {};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "ballast-history-"));
  publishFakeBuild(dataDir, "b1", [
    listCoin("usdc-circle", "USDC", 4e10, false),
    listCoin("usdt-tether", "USDT", 9e10, false),
    listCoin("zzz-unreviewed", "QQQ", 1e6, true),
  ]);
  // The window's dated snapshots are already published: the backfill must skip them byte for byte.
  mkdirSync(join(dataDir, "snapshots"), { recursive: true });
  // 2023-03-10 is before the series' first published day: it is captured but not built.
  for (const day of DAYS.slice(1)) {
    const file = join(dataDir, `snapshots/${day}.json`);
    writeFileSync(file, JSON.stringify({ snapshotDate: day, publishedBefore: true }));
    published[day] = { bytes: readFileSync(file, "utf8"), mtimeMs: statSync(file).mtimeMs };
  }
  lane = await startOpsLane({
    schemaPrefix: "ballast_history",
    dataDir,
    replay: { captureDir: loadBuildConfig().BALLAST_CAPTURE_DIR, from: DAYS[0], to: DAYS[2] },
  });
  replay = must(lane.replay, "the history replay servers");
}, 60_000);
afterAll(async () => {
  await lane?.close();
});

const post = (path: string, headers: Record<string, string> = {}) => lane.call("POST", path, headers);

/** A capture's provenance as the job reports it (its days are known: every replayed payload has points). */
type Captured = CapturedHistory & { firstDay: string; lastDay: string };
interface Result {
  coins: string[];
  captured: Captured[];
  window: { from: string; to: string };
  rebuild: { from: string; to: string } | null;
  days: { day: string; outcome: string }[];
  built: number;
  provenance: string;
}

/** Starts `path` (expects 202 with jobWaitMs 0), waits for its job to finish and returns the 202 body and the job. */
const runToEnd = (path: string, headers: Record<string, string> = {}) => lane.runToEnd<Result>(path, headers);

/** The capture on disk matches its provenance and holds the replayed payload's window. */
function checkCapture(c: Captured, endpoint: string, id: string) {
  expect([c.endpoint, c.params]).toEqual([endpoint, { id }]);
  const file = readFileSync(join(dataDir, c.key));
  expect(c.key).toMatch(new RegExp(`^raw/${endpoint.split(".")[0]}/\\d{4}-\\d{2}-\\d{2}/.+\\.json\\.gz$`));
  expect(createHash("sha256").update(file).digest("hex")).toBe(c.sha256);
  expect(file.length).toBe(c.bytes);
  const stored = JSON.parse(gunzipSync(file).toString("utf8"));
  expect([stored.endpoint, stored.params, stored.observedAt]).toEqual([endpoint, { id }, c.fetchedAt]);
  expect(c.url.startsWith("http://127.0.0.1:")).toBe(true);
  expect([c.firstDay, c.lastDay]).toEqual([DAYS[0], DAYS[2]]);
}

function publishedUntouched() {
  for (const day of Object.keys(published)) {
    const file = join(dataDir, `snapshots/${day}.json`);
    expect(readFileSync(file, "utf8")).toBe(published[day].bytes);
    expect(statSync(file).mtimeMs).toBe(published[day].mtimeMs);
  }
}

describe("history backfills (issue 31 item 1)", () => {
  it("backfill-cg-prices?stablecoin=USDC captures the CoinGecko chart with provenance; published days are skipped", async () => {
    const { accepted, job } = await runToEnd("/api/backfill-cg-prices?stablecoin=USDC", {
      "Idempotency-Key": "cg-usdc-1",
    });
    expect(job.error).toBeNull();
    expect(job.status).toBe("succeeded");
    const res = job.result;
    expect(res.coins).toEqual(["usdc-circle"]);
    expect(res.captured).toHaveLength(1);
    checkCapture(res.captured[0], "coingecko.market_chart", "usd-coin");
    expect(replay.requests).toContain("coingecko /api/v3/coins/usd-coin/market_chart");
    const prov = JSON.parse(readFileSync(join(dataDir, res.provenance), "utf8"));
    expect(prov.captured).toEqual(res.captured);
    expect(res.window).toEqual({ from: DAYS[0], to: DAYS[2] });
    expect(res.rebuild).toEqual({ from: DAYS[1], to: DAYS[2] });
    expect(res.days).toEqual(DAYS.slice(1).map((day) => ({ day, outcome: "skipped" })));
    expect(existsSync(join(dataDir, `snapshots/${DAYS[0]}.json`))).toBe(false);
    expect(res.built).toBe(0);
    publishedUntouched();

    // The same Idempotency-Key replays the first answer: the same job, no second capture.
    const before = replay.requests.length;
    const again = await post("/api/backfill-cg-prices?stablecoin=USDC", { "Idempotency-Key": "cg-usdc-1" });
    expect(again.headers.get("X-Idempotent-Replay")).toBe("true");
    expect(((await again.json()) as { requestId: string }).requestId).toBe(accepted.requestId);
    expect(replay.requests.length).toBe(before);
  });

  it("backfill-depegs captures price and supply history of the coin (by id)", async () => {
    const { job } = await runToEnd("/api/backfill-depegs?stablecoin=usdc-circle");
    expect(job.status).toBe("succeeded");
    const byEndpoint = Object.fromEntries(job.result.captured.map((c) => [c.endpoint, c]));
    checkCapture(byEndpoint["coingecko.market_chart"], "coingecko.market_chart", "usd-coin");
    checkCapture(byEndpoint["defillama.stablecoin"], "defillama.stablecoin", "2");
    expect(job.result.built).toBe(0);
    publishedUntouched();
  });

  it("backfill-supply-history captures the DefiLlama supply history and builds the window's unpublished day", async () => {
    // 2023-03-12 is not published yet: the backfill builds it as a new dated snapshot, the others stay as they were.
    const last = DAYS[2];
    rmSync(join(dataDir, `snapshots/${last}.json`));
    const { job } = await runToEnd("/api/backfill-supply-history?stablecoin=usdc");
    expect(job.error).toBeNull();
    expect(job.status).toBe("succeeded");
    expect(job.result.captured.map((c) => c.endpoint)).toEqual(["defillama.stablecoin"]);
    checkCapture(job.result.captured[0], "defillama.stablecoin", "2");
    expect(job.result.days).toEqual([
      { day: DAYS[1], outcome: "skipped" },
      { day: last, outcome: "built" },
    ]);
    expect(job.result.built).toBe(1);
    const built = JSON.parse(readFileSync(join(dataDir, `snapshots/${last}.json`), "utf8"));
    expect(built.snapshotDate).toBe(last);
    expect(built.publishedBefore).toBeUndefined();
    published[last] = {
      bytes: readFileSync(join(dataDir, `snapshots/${last}.json`), "utf8"),
      mtimeMs: statSync(join(dataDir, `snapshots/${last}.json`)).mtimeMs,
    };
    publishedUntouched();
  });

  it("a filter that selects nothing is 400 naming its parameter, and starts no job", async () => {
    const n = await lane.jobCount();
    const requests = replay.requests.length;
    for (const [path, param] of [
      ["/api/backfill-cg-prices?stablecoin=ZZZ", "stablecoin"],
      ["/api/backfill-supply-history?stablecoin=QQQ", "stablecoin"], // unreviewed: not in the registry
      ["/api/backfill-depegs?stablecoin=ZZZ", "stablecoin"],
      ["/api/backfill-depegs?batch=1", "batch"], // 2 reviewed coins, 3 per batch: only batch 0
      ["/api/backfill-supply-history?batch=2&batchSize=1", "batch"],
      ["/api/backfill-cg-prices?stablecoin=", "stablecoin"],
    ] as const) {
      const r = await post(path);
      expect([path, r.status]).toEqual([path, 400]);
      expect(JSON.stringify(await r.json())).toContain(param);
    }
    expect(await lane.jobCount()).toBe(n);
    expect(replay.requests.length).toBe(requests);
    expect(existsSync(join(dataDir, "raw"))).toBe(true);
  });
});
