import { describe, expect, it } from "vitest";
import { PARSED_BYTES_PER_FILE_BYTE, ServingBuild } from "../../api/lib/published.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";

/** A build of `files` (path → JSON text) over a reader that counts its reads per key. */
function buildOf(files: Record<string, string>, cacheBytes: number) {
  const reads = new Map<string, number>();
  const manifest = {
    buildId: "b1",
    files: Object.entries(files).map(([path, text]) => ({ path, bytes: text.length, dataAsOf: null })),
  } as unknown as BuildManifest;
  const build = new ServingBuild(
    manifest,
    0,
    async (key) => {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      const text = files[key.replace("builds/b1/", "")];
      return text === undefined ? null : Buffer.from(text);
    },
    cacheBytes,
  );
  return { build, readsOf: (path: string) => reads.get(`builds/b1/${path}`) ?? 0 };
}

const json = (n: number) => JSON.stringify({ pad: "x".repeat(n - 10) }); // n bytes
const any = (v: unknown) => v;

describe("a serving build's cache of files and payloads: one byte budget, least recently used out first", () => {
  it("keeps a payload in use while one-off files churn through, and never holds more than the budget", async () => {
    const files: Record<string, string> = { "hot.json": json(1000) };
    for (let i = 0; i < 30; i++) files[`f${i}.json`] = json(1000);
    const { build, readsOf } = buildOf(files, 10_000);
    for (let i = 0; i < 30; i++) {
      await build.payload("hot.json", any);
      await build.payload(`f${i}.json`, any);
      expect(build.cacheStats().bytes).toBeLessThanOrEqual(10_000);
    }
    expect(readsOf("hot.json")).toBe(1);
    expect(readsOf("f0.json")).toBe(1);
    await build.payload("f0.json", any);
    expect(readsOf("f0.json")).toBe(2); // churned out meanwhile
  });

  it("charges a parsed payload per byte of its file, and keeps nothing above the budget", async () => {
    const { build, readsOf } = buildOf({ "a.json": json(1000), "big.json": json(5000) }, 4000);
    await build.payload("a.json", any);
    expect(build.cacheStats().bytes).toBe(1000 + 1000 * PARSED_BYTES_PER_FILE_BYTE);
    expect(await build.file("big.json")).not.toBeNull();
    expect(await build.file("big.json")).not.toBeNull();
    expect(readsOf("big.json")).toBe(2);
    expect(build.cacheStats().bytes).toBeLessThanOrEqual(4000);
  });

  it("a payload read with keep: false is neither kept nor cached as bytes", async () => {
    const { build, readsOf } = buildOf({ "ledger.json": json(500) }, 100_000);
    await build.payload("ledger.json", any, { keep: false });
    await build.payload("ledger.json", any, { keep: false });
    expect(readsOf("ledger.json")).toBe(2);
    expect(build.cacheStats()).toEqual({ bytes: 0, entries: 0 });
    expect(await build.payload("missing.json", any, { keep: false })).toBeUndefined();
  });
});
