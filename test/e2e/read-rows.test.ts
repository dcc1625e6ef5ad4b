/**
 * Issue 31 item 2: read rows of spec 4.1 over the suite's recorded build (test/helpers/build-once.ts,
 * as of 2025-09-07T00:00Z, a UTC midnight): the build publishes the dated snapshot and digest of the day
 * it closes (2025-09-06) and a rebuild rewrites none of them; the digest archive on the `standard`
 * profile with its freshness; the per-coin detail's 5-minute stale rule; `/api/events?type=` checked
 * against the event types.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TAPE_EVENT_TYPES } from "../../site-data/depeg-events.ts";
import { buildRecorded, RECORDED_AS_OF } from "../helpers/build-once.ts";
import { buildRecordedInto } from "../helpers/recorded-build.ts";
import { serveDir } from "../helpers/served-build.ts";

const DAY = "2025-09-06"; // closed by the recorded as-of
let dir: string;
/** Shift of the app's clock (ms) from the wall clock: the replay clock then reads as-of + offset. */
let offsetMs = 0;
let api: Awaited<ReturnType<typeof serveDir>>;
beforeAll(async () => {
  ({ dir } = await buildRecorded("ballast-read-rows-"));
  api = await serveDir(dir, "read_rows", { nowMs: () => Date.now() + offsetMs });
});
afterAll(async () => {
  await api?.close();
});

/** Every file under `root`'s dated folders (`snapshots/`, `digests/`): relative path → bytes and mtime. */
function dated(root: string): Map<string, { bytes: Buffer; mtimeMs: number }> {
  const out = new Map<string, { bytes: Buffer; mtimeMs: number }>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(root, p), { bytes: readFileSync(p), mtimeMs: statSync(p).mtimeMs });
    }
  };
  for (const top of ["snapshots", "digests"]) walk(join(root, top));
  return out;
}

describe("the build whose as-of closes a UTC day (make run holds one dated snapshot)", () => {
  it("publishes that day's snapshot, digest and DuckDB file; the index lists it and the projection answers", async () => {
    const files = [...dated(dir).keys()].sort();
    expect(files).toEqual([
      `digests/${DAY}.json`,
      "digests/index.json",
      `snapshots/${DAY}.json`,
      `snapshots/${DAY}/ballast.duckdb`,
      "snapshots/index.json",
    ]);
    const index = await api.get<{ snapshots: { snapshotDate: string; chainIndex: number }[] }>("/api/snapshots/index");
    expect(index.status).toBe(200);
    expect(index.body.snapshots.map((r) => [r.snapshotDate, r.chainIndex])).toEqual([[DAY, 0]]);
    const one = await api.get<{ snapshotDate: string; stablecoinId: string }>(
      `/api/snapshot/${DAY}/stablecoin/usdt-tether`,
    );
    expect([one.status, one.body.snapshotDate, one.body.stablecoinId]).toEqual([200, DAY, "usdt-tether"]);
    const digest = await api.req(`/api/digest-snapshot?date=${DAY}`);
    expect(Buffer.from(await digest.arrayBuffer()).equals(readFileSync(join(dir, `digests/${DAY}.json`)))).toBe(true);
  });

  it("a second build of the same as-of rewrites no dated object (write-once)", async () => {
    const before = dated(dir);
    await buildRecordedInto(dir);
    const after = dated(dir);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, b] of before) {
      const a = after.get(path);
      expect(a?.bytes.equals(b.bytes), path).toBe(true);
      expect(a?.mtimeMs, path).toBe(b.mtimeMs);
    }
  }); // the suite's backstop (vitest.config.ts): a full rebuild beside other jobs on 2 cores took over 180 s
});

describe("read rows", () => {
  it("/api/digest-archive: standard profile with the freshness of its newest edition", async () => {
    // the replay clock runs from the as-of since the store first saw the build (minutes ago on a busy
    // machine, after the rebuild above): set it 30 s past the as-of from the age seen now
    offsetMs = 0;
    const age0 = Number((await api.req("/api/digest-archive")).headers.get("x-data-age"));
    offsetMs = (30 - age0) * 1000;
    const res = await api.req("/api/digest-archive");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=60");
    // the newest edition's window ends at its day's close: the recorded as-of
    expect(res.headers.get("x-data-updated-at")).toBe(String(RECORDED_AS_OF));
    expect(Number(res.headers.get("x-data-age"))).toBeGreaterThanOrEqual(30);
    expect(Number(res.headers.get("x-data-age"))).toBeLessThan(60);
    expect(((await res.json()) as { digests: { date: string }[] }).digests.map((d) => d.date)).toEqual([DAY]);
  });

  it("/api/stablecoin/{id}: fresh up to 5 minutes; then Warning 110, X-Data-Age and no-store; stale past 24 hours", async () => {
    offsetMs = 0;
    const first = await api.req("/api/stablecoin/usdc-circle");
    expect(first.status).toBe(200);
    expect(Number(first.headers.get("x-data-updated-at"))).toBeGreaterThan(0);
    // the replay clock runs from the as-of since the store first saw the build: shift from the age seen now
    const age0 = Number(first.headers.get("x-data-age"));
    /** The detail answered when its data is `age` seconds old on the replay clock. */
    const at = async (age: number) => {
      offsetMs = (age - age0) * 1000;
      const r = await api.req("/api/stablecoin/usdc-circle");
      expect(r.status).toBe(200);
      return {
        age: Number(r.headers.get("x-data-age")),
        cache: r.headers.get("cache-control"),
        warning: r.headers.get("warning"),
        freshness: r.headers.get("x-data-freshness"),
      };
    };
    const fresh = await at(200);
    expect(fresh).toMatchObject({ cache: "public, s-maxage=300, max-age=10", warning: null, freshness: null });
    expect(Math.abs(fresh.age - 200)).toBeLessThanOrEqual(2);
    const late = await at(400);
    expect(late).toMatchObject({ cache: "no-store", freshness: null });
    expect(late.warning).toMatch(/^110 - "Response is stale/);
    expect(Math.abs(late.age - 400)).toBeLessThanOrEqual(2);
    const day = await at(90_000);
    expect(day).toMatchObject({ cache: "no-store", freshness: "stale" });
    expect(day.warning).toMatch(/^110 /);
    offsetMs = 0;
  });

  it("/api/events?type= accepts the event types and class prefixes only; anything else is 400 naming type", async () => {
    for (const type of ["depeg.begun", "freeze", "score.*.x", "depeg.started,unknown.kind"]) {
      const r = await api.get<{ error: string }>(`/api/events?type=${type}`);
      expect(r.status, type).toBe(400);
      expect(r.body.error, type).toMatch(/^Invalid parameter type: /);
    }
    const freeze = await api.get<{ events: { type: string }[] }>("/api/events?type=freeze.destroy&limit=50");
    expect(freeze.status).toBe(200);
    expect(freeze.body.events.length).toBeGreaterThan(0);
    expect(new Set(freeze.body.events.map((e) => e.type))).toEqual(new Set(["freeze.destroy"]));
    const all = await api.get<{ events: { type: string }[] }>("/api/events?type=depeg.*,score.*&limit=500");
    expect(all.status).toBe(200);
    for (const e of all.body.events) {
      expect(TAPE_EVENT_TYPES).toContain(e.type);
      expect(e.type.startsWith("depeg.") || e.type.startsWith("score."), e.type).toBe(true);
    }
  });
});
