import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../build/config.ts";
import { defaultBuildEffects } from "../../build/effects.ts";
import { OG_CACHE_FOLDER, OgImageCache, rendererIdentity, rendererParts, wholePng } from "../../build/og/cache.ts";
import { type OgRenderResult, ogJobs, renderOgImages } from "../../build/og/images.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { STAGED_CACHE_MAX_IDLE_SEC } from "../../build/staged-cache.ts";
import { depegLedgerArtifact } from "../../site-data/depeg-events.ts";
import { stabilityIndexArtifact } from "../../site-data/stability-index.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { AS_OF, EXPECTED } from "../helpers/build-effects-tree.ts";
import { must } from "../helpers/must.ts";

// The OG render cache (build/og/cache.ts) through renderOgImages: two images (depeg, stability index)
// from the site-data payloads of the build-effects fixture build; how many were drawn is read from
// the result (`rendered`, `cached`), the bytes compared with those of the first render.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "ballast-og-cache-test-"));
  dirs.push(d);
  return d;
};

const DEPEG = depegLedgerArtifact.outputs.main.path;
const STABILITY = stabilityIndexArtifact.outputs.main.path;
const site = (path: string) => readFileSync(join(EXPECTED, "files/builds/BUILD-ID", path), "utf8");

/** The payloads of the two images: the fixture's depeg ledger and stability index, its current score replaced when given. */
function payloads(stabilityScore?: number): Map<string, string> {
  const stability = JSON.parse(site(STABILITY));
  if (stabilityScore !== undefined) stability.current.score = stabilityScore;
  return new Map([
    [DEPEG, site(DEPEG)],
    [STABILITY, JSON.stringify(stability)],
  ]);
}

/** The depeg image's node tree, as renderOgImages builds it from `files`. */
const depegNode = (files: Map<string, string>) =>
  must(
    ogJobs(files, AS_OF)
      .find((j) => j.name === "depeg")
      ?.node(),
    "the depeg node",
  );

const bytesByPath = (r: OgRenderResult) => new Map(r.images.map((i) => [i.path, Buffer.from(i.png)]));
const entries = (dir: string) => readdirSync(dir).sort();

describe("OG images through the render cache", () => {
  let dir: string;
  let cold: OgRenderResult[];

  beforeAll(async () => {
    dir = tempDir();
    // two builds at once into the same empty cache: both render, both store (temp file + rename)
    cold = await Promise.all([
      renderOgImages(payloads(), AS_OF, new OgImageCache(dir)),
      renderOgImages(payloads(), AS_OF, new OgImageCache(dir)),
    ]);
  });

  it("a cold cache renders every image and stores each as a whole PNG, no temp file left", () => {
    for (const r of cold) {
      expect(r.images.map((i) => i.path)).toEqual(["og/depeg.png", "og/stability-index.png"]);
      expect([r.rendered, r.cached]).toEqual([2, 0]);
    }
    expect(bytesByPath(cold[1])).toEqual(bytesByPath(cold[0]));
    const names = entries(dir);
    expect(names).toHaveLength(2);
    for (const n of names) {
      expect(n).toMatch(/^[0-9a-f]{64}\.png$/);
      expect(wholePng(readFileSync(join(dir, n)))).toBe(true);
    }
  });

  it("a second render of the same jobs renders nothing and returns identical bytes", async () => {
    const warm = await renderOgImages(payloads(), AS_OF, new OgImageCache(dir));
    expect([warm.rendered, warm.cached]).toEqual([0, 2]);
    expect(bytesByPath(warm)).toEqual(bytesByPath(cold[0]));
    // and they are what the renderer draws without a cache
    const fresh = await renderOgImages(payloads(), AS_OF);
    expect([fresh.rendered, fresh.cached]).toEqual([2, 0]);
    expect(bytesByPath(fresh)).toEqual(bytesByPath(cold[0]));
  });

  it("a changed node tree is rendered again; the unchanged image still comes from the cache", async () => {
    const changed = await renderOgImages(payloads(87), AS_OF, new OgImageCache(dir));
    expect([changed.rendered, changed.cached]).toEqual([1, 1]);
    const before = bytesByPath(cold[0]);
    const after = bytesByPath(changed);
    expect(after.get("og/depeg.png")).toEqual(before.get("og/depeg.png"));
    expect(after.get("og/stability-index.png")?.equals(must(before.get("og/stability-index.png"), "cold"))).toBe(false);
    expect(entries(dir)).toHaveLength(3);
  });

  it("a torn cache file is ignored: the image is rendered again (same bytes) and the entry rewritten whole", async () => {
    const cache = new OgImageCache(dir);
    const key = cache.keyOf(depegNode(payloads()));
    const file = join(dir, `${key}.png`);
    const whole = readFileSync(file);
    truncateSync(file, Math.floor(whole.length / 2));
    expect(cache.get(key)).toBeNull();
    const r = await renderOgImages(payloads(), AS_OF, cache);
    expect([r.rendered, r.cached]).toEqual([1, 1]);
    expect(bytesByPath(r)).toEqual(bytesByPath(cold[0]));
    expect(readFileSync(file).equals(whole)).toBe(true);
  });

  it("another renderer identity misses every entry", async () => {
    const r = await renderOgImages(payloads(), AS_OF, new OgImageCache(dir, "@vercel/og 0.0.0-another"));
    expect([r.rendered, r.cached]).toEqual([2, 0]);
    expect(bytesByPath(r)).toEqual(bytesByPath(cold[0]));
  });

  it("a hit restarts the entry's idle time; prune removes entries idle longer than the staged cache's limit", async () => {
    const cache = new OgImageCache(tempDir());
    const png = must(cold[0].images[0], "a rendered image").png;
    const [a, b] = ["a".repeat(64), "b".repeat(64)];
    await cache.put(a, png);
    await cache.put(b, png);
    const old = new Date(Date.now() - (STAGED_CACHE_MAX_IDLE_SEC + 60) * 1000);
    for (const k of [a, b]) utimesSync(join(cache.dir, `${k}.png`), old, old);
    expect(Buffer.from(must(cache.get(b), "entry b")).equals(Buffer.from(png))).toBe(true); // touched
    expect(Date.now() - statSync(join(cache.dir, `${b}.png`)).mtimeMs).toBeLessThan(60_000);
    expect(cache.prune()).toBe(1);
    expect(entries(cache.dir)).toEqual([`${b}.png`]);
    expect(cache.get(a)).toBeNull();
  });

  it("wholePng accepts a rendered PNG only whole: a truncated copy, a flipped byte or a trailing byte is not", () => {
    const png = Buffer.from(must(cold[0].images[0], "a rendered image").png);
    expect(wholePng(png)).toBe(true);
    expect(wholePng(png.subarray(0, png.length - 1))).toBe(false);
    expect(wholePng(png.subarray(0, 8))).toBe(false);
    const flipped = Buffer.from(png);
    flipped[100] ^= 0xff;
    expect(wholePng(flipped)).toBe(false);
    expect(wholePng(Buffer.concat([png, Buffer.from([0])]))).toBe(false);
  });
});

describe("cache keys and entries", () => {
  it("the renderer identity names the installed @vercel/og version and the renderer's source", () => {
    const installed = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules/@vercel/og/package.json"), "utf8"));
    const parts = rendererParts();
    expect(parts).toContain(`@vercel/og ${installed.version}`);
    expect(parts).toContain(`render.ts ${readFileSync(join(REPO_ROOT, "build/og/render.ts"), "utf8")}`);
    expect(parts).toContain(`render-worker.ts ${readFileSync(join(REPO_ROOT, "build/og/render-worker.ts"), "utf8")}`);
    expect(rendererIdentity()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("the key follows the tree: style key order and values JSON would drop make other keys", () => {
    const cache = new OgImageCache(tempDir(), "r");
    const node = (style: Record<string, unknown>) => ({ type: "div", props: { style } });
    expect(cache.keyOf(node({ a: 1, b: 2 }))).toBe(cache.keyOf(node({ a: 1, b: 2 })));
    expect(cache.keyOf(node({ a: 1, b: 2 }))).not.toBe(cache.keyOf(node({ b: 2, a: 1 })));
    expect(cache.keyOf(node({ a: Number.NaN }))).not.toBe(cache.keyOf(node({ a: null })));
    expect(cache.keyOf(node({ a: undefined }))).not.toBe(cache.keyOf(node({})));
    expect(new OgImageCache(cache.dir, "s").keyOf(node({}))).not.toBe(cache.keyOf(node({})));
  });

  it("the default build effects keep the cache in ballast-og-images under the scratch dir", () => {
    const scratch = tempDir();
    const fx = defaultBuildEffects({
      captureDir: CAPTURE_DIR,
      sink: new FsSink(tempDir()),
      warehousePath: null,
      scratchDir: scratch,
    });
    expect(fx.ogCache?.dir).toBe(join(scratch, OG_CACHE_FOLDER));
  });
});
