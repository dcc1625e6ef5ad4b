import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { compressBody } from "../lib/encoding.ts";
import type { StoredEncoding } from "../lib/published.ts";
import type { StaticResult } from "../routes/route.ts";

/**
 * The API reference page served at `/docs`: Redoc 3 rendered by `redocly build-docs --inlineBundle`
 * from this process's OpenAPI description, through `template.hbs` (no external URL), once per
 * description into a cache directory (`<BALLAST_DATA_DIR>/docs` under the server). The page is
 * ~2.8 MB (the Redoc bundle is inline), too large to commit at every route change; generating it
 * takes 1-2 s, on the first request after a change of the description, template or Redocly version.
 */

const execFileP = promisify(execFile);
const TEMPLATE = fileURLToPath(new URL("./template.hbs", import.meta.url));
const REDOCLY_CONFIG = fileURLToPath(new URL("../../redocly.yaml", import.meta.url));
/** package.json of the installed Redocly CLI (resolved at first use, so a missing CLI fails only `/docs`). */
const redoclyPkg = () => createRequire(import.meta.url).resolve("@redocly/cli/package.json");

/** Bump when the post-processing below changes: part of the cache key. */
const FORMAT = 1;

/** Redoc options of the page: the download button fetches this host's `/openapi.json`. */
const REDOC_OPTIONS = { downloadUrls: [{ title: "Download OpenAPI description (JSON)", url: "/openapi.json" }] };

/**
 * Redoc's sidebar attribution loads Redocly's logo from their CDN once mounted (no option turns it
 * off): replaced by a data: SVG, so the page makes no request outside its origin (the CSP would
 * block it and log an error).
 */
const svg = (width: number, text: string) =>
  `data:image/svg+xml,${encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="14"><text x="0" y="11" font-family="sans-serif" font-size="11" font-weight="bold" fill="#1f2a44">${text}</text></svg>`,
  )}`;
const CDN_LOGOS: [string, string][] = [
  ["https://cdn.redoc.ly/redoc/logo-mini-full.svg", svg(46, "Redocly")],
  ["https://cdn.redoc.ly/redoc/logo-mini.svg", svg(9, "R")],
];

/** Directory the page is generated into when the server wires none (tests, ad-hoc apps). */
export const DEFAULT_DOCS_DIR = join(tmpdir(), "ballast-docs");

/** sha256 (hex) of bytes or text. */
export const sha256Hex = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");

/**
 * Content-Security-Policy of a generated page: nothing but the page itself. Scripts are allowed by the
 * sha256 of each inline `<script>` of `html` (Redoc's color-mode snippet and the inline bundle); styles
 * inline (styled-components injects `<style>` elements at run time); images and fonts only as data: URIs;
 * no connection, frame, form target, base URL or framing by other sites.
 */
export function apiDocsCsp(html: string): string {
  const hashes = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].map(
    (m) => `'sha256-${createHash("sha256").update(m[1]).digest("base64")}'`,
  );
  return [
    "default-src 'none'",
    `script-src ${[...new Set(hashes)].join(" ")}`,
    "style-src 'unsafe-inline'",
    "img-src data:",
    "font-src data:",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * Renders the page for `openapi` (the bytes `/openapi.json` serves) with the Redocly CLI into `outFile`
 * (written whole, atomically): Redoc telemetry off, the template's `ballast-openapi-sha256` meta set to
 * the description's sha256, the CDN logo replaced (see CDN_LOGOS).
 * @throws when the CLI fails (its last output lines are in the message) or the output still names
 *   Redocly's CDN or has telemetry on (a Redocly upgrade changed its output: revisit the post-processing).
 */
export async function renderApiDocs(openapi: Uint8Array, outFile: string): Promise<void> {
  const dir = dirname(outFile);
  await mkdir(dir, { recursive: true });
  const stem = join(dir, `.render-${process.pid}-${Date.now()}`);
  const spec = `${stem}.openapi.json`;
  const raw = `${stem}.html`;
  try {
    await writeFile(spec, openapi);
    try {
      await execFileP(
        process.execPath,
        [
          join(dirname(redoclyPkg()), "bin/cli.js"),
          "build-docs",
          spec,
          "--inlineBundle",
          "--template",
          TEMPLATE,
          "--config",
          REDOCLY_CONFIG,
          `--templateOptions.openapiSha256=${sha256Hex(openapi)}`,
          "--openapi",
          JSON.stringify(REDOC_OPTIONS),
          "--output",
          raw,
        ],
        { env: { ...process.env, REDOCLY_TELEMETRY: "off" }, maxBuffer: 16 << 20 },
      );
    } catch (err) {
      const out = `${(err as { stdout?: string }).stdout ?? ""}\n${(err as { stderr?: string }).stderr ?? ""}`
        .trim()
        .split("\n")
        .slice(-5)
        .join("\n");
      throw new Error(`redocly build-docs failed: ${out || (err as Error).message}`);
    }
    let html = await readFile(raw, "utf8");
    for (const [url, local] of CDN_LOGOS) html = html.replaceAll(url, local);
    if (/https:\/\/cdn\.redoc(ly\.com\/redoc|\.ly)\//.test(html))
      throw new Error("redocly build-docs output still loads from Redocly's CDN");
    if (!html.includes('"disableTelemetry":true')) throw new Error("redocly build-docs output has Redoc telemetry on");
    await writeFile(raw, html);
    await rename(raw, outFile);
  } finally {
    await rm(spec, { force: true });
    await rm(raw, { force: true });
  }
}

/** Cache file name of the page for `openapi`: changes with the description, template, Redocly version and FORMAT. */
async function cacheName(openapi: Uint8Array): Promise<string> {
  const key = createHash("sha256")
    .update(openapi)
    .update(await readFile(TEMPLATE))
    .update(await readFile(redoclyPkg()))
    .update(String(FORMAT))
    .digest("hex");
  return `api-docs-${key.slice(0, 32)}.html`;
}

/** The page of `openapi` as a static result, from `dir` or rendered into it (older pages there are removed). */
async function loadPage(openapi: Uint8Array, dir: string): Promise<StaticResult> {
  const file = join(dir, await cacheName(openapi));
  let bytes = await readFile(file).catch(() => null);
  if (!bytes) {
    await renderApiDocs(openapi, file);
    bytes = await readFile(file);
    for (const f of await readdir(dir))
      if (f.startsWith("api-docs-") && join(dir, f) !== file) await rm(join(dir, f), { force: true });
  }
  const forms = new Map<StoredEncoding, Uint8Array>();
  return {
    bytes,
    contentType: "text/html; charset=utf-8",
    headers: {
      "Content-Security-Policy": apiDocsCsp(bytes.toString("utf8")),
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    },
    encoded: async (e) => {
      let form = forms.get(e);
      if (!form) {
        form = compressBody(bytes, e);
        forms.set(e, form);
      }
      return form;
    },
  };
}

const pages = new Map<string, { openapi: Uint8Array; page: Promise<StaticResult> }>();

/**
 * The `/docs` page for the description `openapi` (the bytes `/openapi.json` serves), generated once into
 * `dir` (default {@link DEFAULT_DOCS_DIR}) and kept in memory; concurrent first requests share one render,
 * and a failed render is retried by the next request.
 * @throws when rendering fails (see {@link renderApiDocs}).
 */
export function apiDocsPage(openapi: Uint8Array, dir = DEFAULT_DOCS_DIR): Promise<StaticResult> {
  const cached = pages.get(dir);
  if (cached && cached.openapi === openapi) return cached.page;
  const page = loadPage(openapi, dir);
  pages.set(dir, { openapi, page });
  page.catch(() => {
    if (pages.get(dir)?.page === page) pages.delete(dir);
  });
  return page;
}
