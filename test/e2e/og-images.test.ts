import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Health } from "../../api/health.ts";
import { ogJobs, renderOgImages } from "../../build/og/images.ts";
import type { OgChild } from "../../build/og/render.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { OG_HEIGHT, OG_STABLECOIN_LIMIT, OG_WIDTH } from "../../site-data/og-images.ts";
import { buildRecorded } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { serveDir } from "../helpers/served-build.ts";

// One recorded build (2025-09-07) publishes the share images; the API serves them without a key.

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const ROUTES = ["/api/og/stablecoin/usdt-tether", "/api/og/safety-scores", "/api/og/depeg", "/api/og/stability-index"];

/** The text an image draws: every string of its node tree, in document order. */
function drawnText(node: OgChild): string[] {
  if (node === null || node === undefined || node === false) return [];
  if (typeof node === "string" || typeof node === "number") return [String(node)];
  const kids = (node.props as { children?: OgChild | OgChild[] }).children;
  return (Array.isArray(kids) ? kids : [kids]).flatMap(drawnText);
}

/** Decodes an 8-bit RGB/RGBA non-interlaced PNG (what resvg writes): width, height, channels, raw pixels. */
function decodePng(buf: Buffer) {
  expect(buf.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  let off = 8;
  let width = 0,
    height = 0,
    channels = 0;
  const idat: Buffer[] = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect([data[8], data[12]]).toEqual([8, 0]); // bit depth 8, not interlaced
      channels = ({ 2: 3, 6: 4 } as Record<number, number>)[data[9]];
      expect(channels).toBeDefined();
    }
    if (type === "IDAT") idat.push(data);
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= channels ? px[y * stride + x - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? px[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c;
      const pr =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      px[y * stride + x] = (v + [0, a, b, (a + b) >> 1, pr][filter]) & 0xff;
    }
  }
  return { width, height, channels, px };
}

/** Pixels in the box [x0,x1)×[y0,y1) far from the background #0b1220 and the panels (drawn text, bars, lines). */
function inkPixels(img: ReturnType<typeof decodePng>, x0: number, y0: number, x1: number, y1: number): number {
  let n = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * img.width + x) * img.channels;
      if (Math.abs(img.px[i] - 0x0b) + Math.abs(img.px[i + 1] - 0x12) + Math.abs(img.px[i + 2] - 0x20) > 150) n++;
    }
  }
  return n;
}

let dir: string;
let manifest: BuildManifest;
let served: Awaited<ReturnType<typeof serveDir>>;

beforeAll(async () => {
  ({ dir, manifest } = await buildRecorded("ballast-og-"));
  served = await serveDir(dir, "og_images");
});
afterAll(async () => {
  await served?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("OG share images (spec 4.1 /api/og/*)", () => {
  it("the build publishes the index images and one image per large coin, listed in the manifest without compressed siblings", () => {
    const og = manifest.files.filter((f) => f.path.startsWith("og/"));
    const paths = og.map((f) => f.path);
    for (const p of [
      "og/safety-scores.png",
      "og/depeg.png",
      "og/stability-index.png",
      "og/stablecoin/usdt-tether.png",
      "og/stablecoin/usdc-circle.png",
    ])
      expect(paths).toContain(p);
    expect(paths.filter((p) => p.startsWith("og/stablecoin/")).length).toBe(OG_STABLECOIN_LIMIT);
    for (const f of og) {
      expect(f.encodings).toBeUndefined();
      expect(f.artifact).toMatch(/^og:/);
      const bytes = readFileSync(join(dir, "builds", manifest.buildId, f.path));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(f.sha256);
    }
  });

  it("GET and HEAD answer image/png 1200×630 with the og-image cache profile and no key; text is drawn", async () => {
    for (const path of ROUTES) {
      const res = await served.req(path, null);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      expect(res.headers.get("cache-control")).toBe("public, max-age=900, s-maxage=900");
      const buf = Buffer.from(await res.arrayBuffer());
      expect(buf.subarray(0, 8).equals(PNG_SIGNATURE), path).toBe(true);
      expect(buf.toString("latin1", 12, 16)).toBe("IHDR");
      expect([buf.readUInt32BE(16), buf.readUInt32BE(20)]).toEqual([OG_WIDTH, OG_HEIGHT]);
      const img = decodePng(buf);
      // Brand and as-of line, title, body panels all carry drawn pixels on the dark background.
      expect(inkPixels(img, 100, 40, 240, 95), `${path} brand`).toBeGreaterThan(300);
      expect(inkPixels(img, 800, 50, 1150, 85), `${path} as-of`).toBeGreaterThan(300);
      expect(inkPixels(img, 56, 150, 700, 230), `${path} title`).toBeGreaterThan(2000);
      expect(inkPixels(img, 56, 300, 1150, 540), `${path} body`).toBeGreaterThan(3000);
      // The background really is dark: most of the image is not ink.
      expect(inkPixels(img, 0, 0, OG_WIDTH, OG_HEIGHT)).toBeLessThan(OG_WIDTH * OG_HEIGHT * 0.25);

      const head = await served.app.request(path, { method: "HEAD" });
      expect(head.status, `HEAD ${path}`).toBe(200);
      expect(head.headers.get("content-type")).toBe("image/png");
      expect(head.headers.get("cache-control")).toBe("public, max-age=900, s-maxage=900");
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    }
  });

  it("unknown coin or image is 404; a listed coin without an image is 503 og-images; health no longer lists og-images", async () => {
    expect((await served.req("/api/og/stablecoin/not-a-coin", null)).status).toBe(404);
    expect((await served.app.request("/api/og/stablecoin/not-a-coin", { method: "HEAD" })).status).toBe(404);
    expect((await served.req("/api/og/no-such-image", null)).status).toBe(404);
    const detail = manifest.files.map((f) => f.path).filter((p) => /^site-data\/stablecoin\/[^/]+\.json$/.test(p));
    const small = must(
      detail
        .map((p) => p.slice("site-data/stablecoin/".length, -".json".length))
        .find((id) => !manifest.files.some((f) => f.path === `og/stablecoin/${id}.png`)),
      "a listed coin without an image",
    );
    const res = await served.get<{ error: string }>(`/api/og/stablecoin/${small}`, null);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect(res.body.error).toBe("Data not yet available: og-images");
    const health = await served.get<Health>("/api/health", null);
    expect(JSON.stringify(health.body.warnings)).not.toContain("og-images");
  });

  it("rendering is deterministic: the build's site-data gives the published bytes again", async () => {
    const root = join(dir, "builds", manifest.buildId);
    const files = new Map<string, string>();
    for (const f of manifest.files) {
      if (
        f.path.startsWith("site-data/") &&
        f.path.endsWith(".json") &&
        (!f.path.startsWith("site-data/stablecoin/") || f.path.includes("usdt-tether"))
      )
        files.set(f.path, readFileSync(join(root, f.path), "utf8"));
    }
    const again = await renderOgImages(files, manifest.asOf);
    expect(again.refused).toEqual([]);
    expect(again.images.map((i) => i.path)).toEqual([
      "og/stablecoin/usdt-tether.png",
      "og/safety-scores.png",
      "og/depeg.png",
      "og/stability-index.png",
    ]);
    for (const i of again.images) {
      expect(createHash("sha256").update(i.png).digest("hex"), i.path).toBe(
        must(
          manifest.files.find((f) => f.path === i.path),
          `${i.path} in the manifest`,
        ).sha256,
      );
    }
  });

  it("the safety-scores image counts the coins /api/stablecoins lists at the same build, per grade too", async () => {
    const root = join(dir, "builds", manifest.buildId);
    const files = new Map<string, string>();
    for (const f of manifest.files)
      if (/^site-data\/[^/]+\.json$/.test(f.path)) files.set(f.path, readFileSync(join(root, f.path), "utf8"));
    const job = must(
      ogJobs(files, manifest.asOf).find((j) => j.name === "safety-scores"),
      "the safety-scores image",
    );
    const text = drawnText(job.node());
    const list = await served.get<{ peggedAssets: { id: string }[] }>("/api/stablecoins");
    expect(list.status).toBe(200);
    const listed = list.body.peggedAssets.length;
    expect(listed).toBeGreaterThan(0);
    const heading = must(
      text.map((t) => /^(\d+) of (\d+) coins graded$/.exec(t)).find(Boolean),
      "the title's coin count",
    );
    expect(Number(heading[2])).toBe(listed);
    // Bars: the number drawn above each grade label; they add up to the listed coins, NR the ungraded ones.
    const grades = ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "NR"];
    const perGrade = grades.map((g) => Number(text[text.indexOf(g) - 1]));
    expect(perGrade.reduce((a, b) => a + b, 0)).toBe(listed);
    expect(listed - perGrade[perGrade.length - 1]).toBe(Number(heading[1]));
  });

  it("an image whose data is missing is not rendered (its route then answers 503)", async () => {
    const r = await renderOgImages(new Map(), manifest.asOf);
    expect(r.images).toEqual([]);
    expect(r.skipped).toEqual([
      "og/safety-scores.png: no safety grades, summary or stablecoin list",
      "og/depeg.png: no depeg ledger",
      "og/stability-index.png: no current stability index reading",
    ]);
  });
});
