import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, utimesSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { OG_HEIGHT, OG_WIDTH } from "../../site-data/og-images.ts";
import { pruneIdleEntries } from "../staged-cache.ts";
import type { OgNode } from "./render.ts";

/** Folder of the rendered-image cache under the build's scratch dir, beside the parsed-capture cache (STAGED_CACHE_FOLDER). */
export const OG_CACHE_FOLDER = "ballast-og-images";

/**
 * What decides the bytes renderPng makes of a node tree, besides the tree: the installed @vercel/og
 * version (satori, resvg and the Geist font are bundled in it), the Node version (its ICU data breaks
 * text into lines), the image size, and the source of build/og/render.ts and render-worker.ts.
 * Each part starts with its label; in this order.
 */
export function rendererParts(): string[] {
  const pkg = createRequire(import.meta.url).resolve("@vercel/og/package.json");
  const og = JSON.parse(readFileSync(pkg, "utf8")) as { version: string };
  const source = (f: string) => readFileSync(new URL(f, import.meta.url), "utf8");
  return [
    `@vercel/og ${og.version}`,
    `node ${process.version}`,
    `size ${OG_WIDTH}x${OG_HEIGHT}`,
    `render.ts ${source("./render.ts")}`,
    `render-worker.ts ${source("./render-worker.ts")}`,
  ];
}

/** rendererIdentity's value, computed once per process. */
let identity: string | null = null;

/** sha256 (hex) of rendererParts, computed once per process: the renderer part of every cache key. */
export function rendererIdentity(): string {
  identity ??= createHash("sha256").update(rendererParts().join("\n")).digest("hex");
  return identity;
}

/**
 * The node tree as JSON for the cache key: keys in their order (satori applies style keys in order,
 * so a reordered style is another image), and the values JSON would lose (undefined, NaN, ±Infinity)
 * spelled out instead of dropped or nulled, so two trees renderPng could draw differently never share a key.
 */
function treeJson(node: OgNode): string {
  return JSON.stringify(node, (_k, v: unknown) =>
    v === undefined || (typeof v === "number" && !Number.isFinite(v)) ? `\u0000${String(v)}` : v,
  );
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * True when `bytes` are a whole PNG: the signature, then chunks whose lengths fit and whose CRCs
 * match, the last being IEND and ending the file. A torn or truncated file fails.
 */
export function wholePng(bytes: Buffer): boolean {
  if (bytes.length < PNG_SIGNATURE.length || !bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return false;
  let at = PNG_SIGNATURE.length;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > bytes.length) return false;
    if (crc32(bytes.subarray(at + 4, end - 4)) >>> 0 !== bytes.readUInt32BE(end - 4)) return false;
    if (bytes.toString("latin1", at + 4, at + 8) === "IEND") return end === bytes.length;
    at = end;
  }
  return false;
}

/**
 * Rendered OG images kept across builds in a local folder (`<scratch>/ballast-og-images/`), one plain
 * PNG file per entry, `<key>.png`. The key is the sha256 of the image's node tree (treeJson) and the
 * renderer identity (rendererIdentity, or the one given), so an image whose content and renderer did
 * not change is not rendered again (rendering is byte-reproducible). Entries are written atomically
 * (temp file + rename: two builds at once never read half a file), checked whole on read (wholePng:
 * anything else is a miss), touched on use and removed after STAGED_CACHE_MAX_IDLE_SEC unused (`prune`).
 */
export class OgImageCache {
  /**
   * @param dir the cache folder (created on the first put)
   * @param renderer identity of the renderer the entries were drawn with (default rendererIdentity())
   */
  constructor(
    readonly dir: string,
    private readonly renderer: string = rendererIdentity(),
  ) {}

  /** The entry key (64 hex digits) of `node` drawn by this cache's renderer. */
  keyOf(node: OgNode): string {
    return createHash("sha256").update(this.renderer).update("\n").update(treeJson(node)).digest("hex");
  }

  /** The PNG bytes stored under `key`, touched (its idle time restarts), or null when there is none or it is not a whole PNG. */
  get(key: string): Uint8Array | null {
    const file = join(this.dir, `${key}.png`);
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    if (!wholePng(bytes)) return null;
    const now = new Date();
    try {
      utimesSync(file, now, now);
    } catch (err) {
      // pruned or replaced by another build since the read: the bytes read are still whole
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /** Stores `png` under `key`: written to a temp file of this process, then renamed into place. */
  async put(key: string, png: Uint8Array): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const tmp = join(this.dir, `.${key}.${process.pid}.${randomBytes(4).toString("hex")}.png`);
    await writeFile(tmp, png);
    renameSync(tmp, join(this.dir, `${key}.png`));
  }

  /** Removes entries (and temp files of killed writers) unused for more than STAGED_CACHE_MAX_IDLE_SEC; returns how many files went. */
  prune(nowMs = Date.now()): number {
    return pruneIdleEntries(this.dir, ".png", nowMs);
  }
}
