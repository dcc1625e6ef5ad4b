import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { MemorySink } from "../../build/memory-effects.ts";
import { backfillSnapshots, publishSnapshot, verifyChain } from "../../build/snapshots.ts";
import { type SnapshotIndexEntry, SnapshotIndexSchema } from "../../site-data/snapshot.ts";
import { must } from "../helpers/must.ts";

// Issue 29 part 1: the snapshot index is a hash chain over every dated object of each day (snapshot,
// digest, DuckDB file, dataset day files). Rows are appended in publication order and never replaced,
// so a gap filled later changes no published row; verifyChain (verify-snapshot) reports the first
// broken link by date and file. Expected hashes are computed here from the stored bytes and the
// formula docs/methodology/dated-snapshots.md states, not read back from the code under test.

process.env.BALLAST_LOG = "silent";
const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
const [D1, D2, D3] = ["2025-06-01", "2025-06-02", "2025-06-03"];
const asOfOf = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000 + 86400;
/** A minimal snapshot envelope that passes SnapshotSchema. */
const snapshotBytes = (day: string) =>
  `${JSON.stringify({
    version: 1,
    snapshotDate: day,
    asOf: asOfOf(day),
    generatedAt: asOfOf(day),
    buildId: `build-${day}`,
    methodologyVersions: { depeg: "ballast-depeg-v3", consensus: "ballast-price-consensus-v3" },
    inputs: [],
    stablecoins: [],
    fxFallbackRates: {},
    reportCards: [],
    psi: null,
    dews: [],
    liquidity: [],
    depegIncidents: [],
    unavailable: {},
  })}\n`;
const composed = (day: string) => ({
  bytes: snapshotBytes(day),
  digest: `{"date":"${day}"}\n`,
  duckdb: new Uint8Array(Buffer.from(`duckdb of ${day}`)),
});
const CSV = `datasets/top-stablecoins/${D1}.csv`;
const CSV_BYTES = "# ballast dataset top-stablecoins\nid,v\nx,1\n";

/** The chain formula of docs/methodology/dated-snapshots.md, written out here. */
function expectedChainHash(r: Omit<SnapshotIndexEntry, "chainHash">): string {
  const versions = Object.entries(r.methodologyVersions).sort(([a], [b]) => (a < b ? -1 : 1));
  const files = [...r.datedFiles].sort((a, b) => (a.path < b.path ? -1 : 1)).map((f) => [f.path, f.sha256]);
  const fields = [
    r.chainIndex,
    r.snapshotDate,
    r.buildId,
    r.contentHash,
    r.byteSize,
    r.createdAt,
    versions,
    r.digestSha256,
    r.databaseSha256,
    files,
  ];
  return sha(`${r.previousChainHash}\n${JSON.stringify(fields)}`);
}

const readIndex = async (sink: MemorySink) =>
  SnapshotIndexSchema.parse(JSON.parse(Buffer.from(must(await sink.get("snapshots/index.json"), "index")).toString()))
    .snapshots;
const rowOf = (rows: SnapshotIndexEntry[], day: string) =>
  must(
    rows.find((r) => r.snapshotDate === day),
    day,
  );

let sink: MemorySink;
let before: SnapshotIndexEntry[];
beforeAll(async () => {
  sink = new MemorySink();
  await sink.put(`${CSV}.gz`, gzipSync(CSV_BYTES));
  await sink.put(CSV, CSV_BYTES);
  await publishSnapshot(sink, D1, composed(D1));
  await publishSnapshot(sink, D3, composed(D3));
  before = await readIndex(sink);
  await publishSnapshot(sink, D2, composed(D2)); // a gap filled after a newer day
});

describe("snapshot index chain", () => {
  it("each row carries the sha256 of its day's snapshot, digest, DuckDB file and dataset day files", async () => {
    const d1 = rowOf(await readIndex(sink), D1);
    expect(d1).toMatchObject({
      contentHash: sha(snapshotBytes(D1)),
      byteSize: Buffer.byteLength(snapshotBytes(D1)),
      digestSha256: sha(`{"date":"${D1}"}\n`),
      databaseSha256: sha(`duckdb of ${D1}`),
      datedFiles: [{ path: CSV, sha256: sha(CSV_BYTES) }],
      chainIndex: 0,
      previousChainHash: "0".repeat(64),
    });
    expect(rowOf(await readIndex(sink), D3).datedFiles).toEqual([]);
  });

  it("links rows in publication order with the stated formula; filling a gap later changes no published row", async () => {
    const rows = await readIndex(sink);
    expect(rows.map((r) => r.snapshotDate)).toEqual([D3, D2, D1]); // served newest first by date
    const byChain = [...rows].sort((a, b) => a.chainIndex - b.chainIndex);
    expect(byChain.map((r) => [r.snapshotDate, r.chainIndex])).toEqual([
      [D1, 0],
      [D3, 1],
      [D2, 2],
    ]);
    let previous = "0".repeat(64);
    for (const r of byChain) {
      expect(r.previousChainHash, r.snapshotDate).toBe(previous);
      expect(r.chainHash, r.snapshotDate).toBe(expectedChainHash(r));
      previous = r.chainHash;
    }
    expect(rowOf(rows, D1)).toEqual(rowOf(before, D1));
    expect(rowOf(rows, D3)).toEqual(rowOf(before, D3));
  });

  it("a published day is never rewritten: publishing it again writes nothing", async () => {
    const tree = sink.tree();
    expect(await publishSnapshot(sink, D1, { bytes: "{}", digest: "{}", duckdb: new Uint8Array([9]) })).toBe(false);
    expect(sink.tree()).toEqual(tree);
  });

  it("verify-snapshot's chain check passes on the intact record and names the head", async () => {
    const v = await verifyChain(sink);
    expect(v).toMatchObject({ ok: true, rows: 3, problems: [], pruned: [] });
    expect(v.head).toEqual({ snapshotDate: D2, chainIndex: 2, chainHash: rowOf(await readIndex(sink), D2).chainHash });
    // 3 snapshots + 3 digests + 3 DuckDB files + the CSV and its .gz sibling
    expect(v.filesChecked).toBe(11);
  });
});

describe("tampering with a past day is reported by date and file", () => {
  /** Replaces `key`'s bytes for the duration of `fn`. */
  async function tampered<T>(key: string, bytes: Uint8Array | string, fn: () => Promise<T>): Promise<T> {
    const original = must(await sink.get(key), key);
    await sink.put(key, bytes);
    try {
      return await fn();
    } finally {
      await sink.put(key, original);
    }
  }

  it("a rewritten dataset day file, its compressed sibling, a digest or a snapshot", async () => {
    const first = async (key: string, bytes: Uint8Array | string) =>
      (await tampered(key, bytes, () => verifyChain(sink))).problems[0];
    // the file alone: one problem (its intact siblings still match what the index records)
    const csvOnly = await tampered(CSV, "id,v\nx,2\n", () => verifyChain(sink));
    expect(csvOnly.problems).toEqual([
      { date: D1, file: CSV, reason: `sha256 ${sha("id,v\nx,2\n")} where the index records ${sha(CSV_BYTES)}` },
    ]);
    expect(await first(`${CSV}.gz`, gzipSync("id,v\nx,2\n"))).toEqual({
      date: D1,
      file: `${CSV}.gz`,
      reason: `does not decompress to the bytes the index records for ${CSV}`,
    });
    expect(await first(`digests/${D3}.json`, "{}")).toMatchObject({ date: D3, file: `digests/${D3}.json` });
    expect(await first(`snapshots/${D2}.json`, snapshotBytes(D2).replace("build-", "other-"))).toMatchObject({
      date: D2,
      file: `snapshots/${D2}.json`,
    });
    expect((await verifyChain(sink)).ok).toBe(true);
  });

  it("an edited index row breaks its own hash; a rewrite re-chained forward is caught by the head a reader holds", async () => {
    const rows = await readIndex(sink);
    const heldHead = must((await verifyChain(sink)).head, "head").chainHash;
    const forged = snapshotBytes(D1).replace("build-", "forged-");
    const edited = rows.map((r) =>
      r.snapshotDate === D1 ? { ...r, contentHash: sha(forged), byteSize: Buffer.byteLength(forged) } : r,
    );
    const index = (snapshots: SnapshotIndexEntry[]) => `${JSON.stringify({ snapshots })}\n`;
    const v = await tampered("snapshots/index.json", index(edited), () =>
      tampered(`snapshots/${D1}.json`, forged, () => verifyChain(sink)),
    );
    expect(v.problems).toEqual([
      { date: D1, file: "snapshots/index.json", reason: "the row's fields do not hash to its chainHash (row edited)" },
    ]);
    // the forger recomputes every chain hash from the edited row on: consistent, but the held head is gone
    const rechained: SnapshotIndexEntry[] = [];
    for (const r of [...edited].sort((a, b) => a.chainIndex - b.chainIndex)) {
      const link = { ...r, previousChainHash: rechained.at(-1)?.chainHash ?? "0".repeat(64) };
      rechained.push({ ...link, chainHash: expectedChainHash(link) });
    }
    const w = await tampered("snapshots/index.json", index(rechained), () =>
      tampered(`snapshots/${D1}.json`, forged, () => verifyChain(sink, { expectChainHash: heldHead })),
    );
    expect(w.problems).toEqual([
      {
        date: "-",
        file: "snapshots/index.json",
        reason: `no row carries the chain hash ${heldHead} (the record was rewritten since it was read)`,
      },
    ]);
    expect((await verifyChain(sink, { expectChainHash: heldHead })).ok).toBe(true);
  });

  it("a dataset day file deleted by retention (before the 90-day window) is pruned, not a break; inside the window it is missing", async () => {
    const csv = must(await sink.get(CSV), CSV);
    await sink.delete(CSV);
    try {
      const inside = await verifyChain(sink);
      expect(inside.problems).toEqual([{ date: D1, file: CSV, reason: "missing" }]);
      await sink.put("latest.json", JSON.stringify({ buildId: "b", asOf: asOfOf(D1) + 91 * 86400, manifest: "m" }));
      const outside = await verifyChain(sink);
      expect(outside).toMatchObject({ ok: true, pruned: [CSV] });
    } finally {
      await sink.delete("latest.json");
      await sink.put(CSV, csv);
    }
  });
});

describe("an index written before the chain", () => {
  it("is rebuilt by the next backfill over stored days (chained in date order), and a stored day left without a row is indexed", async () => {
    const legacy = new MemorySink();
    for (const day of [D1, D2]) {
      await legacy.put(`snapshots/${day}.json`, snapshotBytes(day));
      await legacy.put(`digests/${day}.json`, `{"date":"${day}"}\n`);
    }
    const row = { buildId: "x", methodologyVersions: {}, contentHash: "0".repeat(64), byteSize: 1, createdAt: 1 };
    await legacy.put("snapshots/index.json", JSON.stringify({ snapshots: [{ snapshotDate: D1, ...row }] }));
    const steps = await backfillSnapshots(D1, D2, { captureDir: "/nonexistent", sink: legacy });
    expect(steps.map((s) => s.outcome)).toEqual(["skipped", "skipped"]);
    const rows = await readIndex(legacy);
    expect(rows.map((r) => [r.snapshotDate, r.chainIndex, r.contentHash])).toEqual([
      [D2, 1, sha(snapshotBytes(D2))],
      [D1, 0, sha(snapshotBytes(D1))],
    ]);
    expect((await verifyChain(legacy)).ok).toBe(true);
    // a run stopped between the snapshot and its row: the next backfill adds the row at the chain's end
    await legacy.put(`snapshots/${D3}.json`, snapshotBytes(D3));
    expect((await verifyChain(legacy)).problems).toEqual([
      { date: D3, file: `snapshots/${D3}.json`, reason: "stored but not in the index" },
    ]);
    await backfillSnapshots(D3, D3, { captureDir: "/nonexistent", sink: legacy });
    expect(rowOf(await readIndex(legacy), D3).chainIndex).toBe(2);
    expect((await verifyChain(legacy)).ok).toBe(true);
  });
});
