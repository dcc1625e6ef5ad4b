import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, get, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeListener } from "../../api/app.ts";
import { apiDocsPage, renderApiDocs } from "../../api/docs/page.ts";
import { KeyStore, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { must } from "../helpers/must.ts";

// The API reference page (/docs) needs no build and no key: the app over an empty data dir, behind a
// real HTTP server, with a state store that fails every query (a public route must never use it).
// The page is rendered into a fresh directory, so each run exercises `redocly build-docs` itself.

/** Chromium flags for this machine's closed network (no background connections), as root. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

interface Operation {
  tag: string;
  operationId: string;
  summary: string;
  method: string;
  path: string;
}

const failingSql: SqlClient = {
  query: async () => {
    throw new Error("the state store is not used by /docs");
  },
  close: async () => undefined,
};
const dataDir = mkdtempSync(join(tmpdir(), "ballast-docs-data-"));
const docsDir = mkdtempSync(join(tmpdir(), "ballast-docs-cache-"));
let server: Server;
let base: string;
let browser: Browser;
let openapi: Buffer;
let operations: Operation[];

beforeAll(async () => {
  const listener = createNodeListener({
    store: new PublishedStore(fsReader(dataDir), 0),
    keys: new KeyStore(failingSql, "pepper-for-tests-0123456789"),
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "wall",
    services: { docsDir },
  });
  server = createServer(listener).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  openapi = Buffer.from(await (await fetch(`${base}/openapi.json`)).arrayBuffer());
  const doc = JSON.parse(openapi.toString("utf8")) as {
    paths: Record<string, Record<string, { operationId: string; summary: string; tags: string[] }>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      tag: op.tags[0],
      operationId: op.operationId,
      summary: op.summary,
      method: method.toUpperCase(),
      path,
    })),
  );
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(docsDir, { recursive: true, force: true });
});

/** A page that records console errors and warnings, uncaught errors, CSP violations, failed requests and requests off the server. */
async function watchedPage() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("request", (r) => {
    if (!r.url().startsWith(`${base}/`)) problems.push(`request off the server: ${r.url()}`);
  });
  // Init scripts run outside the page's CSP: they see every violation the policy reports.
  await page.addInitScript(() => {
    (window as unknown as { cspViolations: string[] }).cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as unknown as { cspViolations: string[] }).cspViolations.push(`${e.effectiveDirective} ${e.blockedURI}`),
    );
  });
  const cspViolations = () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
  return { page, problems, cspViolations };
}

/** GET without fetch's automatic decoding: status headers and the bytes as sent. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res
        .on("data", (c: Buffer) => chunks.push(c))
        .on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
        .on("error", reject);
    }).on("error", reject);
  });
}

/** Redoc's section id of an operation: `/<tag>/<operationId>`, lower-cased. */
const sectionId = (op: Operation) => `/${op.tag}/${op.operationId}`.toLowerCase();

/** Text of the rendered section of `op` once its deep link is followed; "" if it does not render within 5 s. */
async function operationText(page: Page, op: Operation): Promise<string> {
  // The rendered text (innerText, read through Playwright), polled until the lazily rendered section shows some.
  const section = page.locator(`[data-section-id="${sectionId(op)}"]`).first();
  const rendered = async () => (await section.allInnerTexts()).join("");
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await page.waitForTimeout(50)) {
    const text = await rendered();
    if (text.length > 0) return text;
  }
  return rendered();
}

describe("API reference page (/docs)", () => {
  it("is HTML rendered from the served description, with a CSP that allows only the page's own inline scripts, without a key, compressed", async () => {
    const res = await fetch(`${base}/docs`, { headers: { "Accept-Encoding": "identity" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await res.text();
    // Rendered from exactly the bytes /openapi.json serves.
    expect(html).toContain(
      `<meta name="ballast-openapi-sha256" content="${createHash("sha256").update(openapi).digest("hex")}" />`,
    );
    expect(html).toContain('"disableTelemetry":true');
    expect(html).not.toMatch(/cdn\.redoc\.ly|cdn\.redocly\.com\/redoc/);
    const csp = Object.fromEntries(
      must(res.headers.get("content-security-policy"), "a Content-Security-Policy header")
        .split(";")
        .map((d) => {
          const [k, ...v] = d.trim().split(/\s+/);
          return [k, v.join(" ")];
        }),
    );
    expect(csp).toMatchObject({
      "default-src": "'none'",
      "style-src": "'unsafe-inline'",
      "img-src": "data:",
      "font-src": "data:",
      "connect-src": "'none'",
      "base-uri": "'none'",
      "frame-ancestors": "'none'",
    });
    const scripts = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map(
      (m) => `'sha256-${createHash("sha256").update(m[1]).digest("base64")}'`,
    );
    expect(scripts.length).toBeGreaterThanOrEqual(1);
    expect(csp["script-src"].split(" ").sort()).toEqual([...new Set(scripts)].sort());
    // Rendered once into the docs dir; later requests are answered from memory, compressed on request.
    expect(readdirSync(docsDir).filter((f) => f.endsWith(".html"))).toHaveLength(1);
    const br = await rawGet(`${base}/docs`, { "Accept-Encoding": "br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.body.byteLength).toBeLessThan(Buffer.byteLength(html) / 3);
    expect(brotliDecompressSync(br.body).toString("utf8")).toBe(html);
  });

  it("is kept in the docs dir across restarts; a failed render leaves nothing behind and names the CLI", async () => {
    const [file] = readdirSync(docsDir).filter((f) => f.endsWith(".html"));
    const before = statSync(join(docsDir, file)).mtimeMs;
    // Equal bytes in a new buffer miss the in-memory page, as after a restart: the file is read, not rendered again.
    const page = await apiDocsPage(Buffer.from(openapi), docsDir);
    expect(statSync(join(docsDir, file)).mtimeMs).toBe(before);
    expect(Buffer.from(page.bytes).equals(readFileSync(join(docsDir, file)))).toBe(true);
    const scratch = mkdtempSync(join(tmpdir(), "ballast-docs-bad-"));
    try {
      await expect(renderApiDocs(Buffer.from("{ not json"), join(scratch, "page.html"))).rejects.toThrow(
        /redocly build-docs failed/,
      );
      expect(readdirSync(scratch)).toEqual([]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("renders every operation in headless Chromium with nothing blocked: no console error, CSP violation or request off the server", async () => {
    const { page, problems, cspViolations } = await watchedPage();
    try {
      await page.goto(`${base}/docs`, { waitUntil: "load" });
      await page.waitForSelector('[data-component-name="Menu/MenuItem"]');
      await page.screenshot({ path: "/tmp/docs.png" });
      expect(await page.title()).toBe("Ballast stablecoin analytics API");
      const missing: string[] = [];
      for (const tag of [...new Set(operations.map((o) => o.tag))]) {
        const ops = operations.filter((o) => o.tag === tag);
        // Redoc renders sections lazily: follow each operation's deep link, then read its section.
        for (const op of ops) {
          await page.evaluate(
            (hash) => {
              location.hash = hash;
            },
            `#${sectionId(op)}`,
          );
          const text = await operationText(page, op);
          if (!text.includes(op.summary) || !text.includes(op.method) || !text.includes(op.path))
            missing.push(`${op.operationId} (${op.method} ${op.path}): ${JSON.stringify(text.slice(0, 120))}`);
        }
        // The sidebar, open at this tag, lists its operations, each linking to its section.
        for (const op of ops) {
          const link = page.locator(`[data-component-name="Menu/MenuItem"] a[href="#${sectionId(op)}"]`);
          if (!(await link.allInnerTexts()).at(-1)?.includes(op.summary))
            missing.push(`${op.operationId}: not in the sidebar`);
        }
        if (missing.length >= 5) break; // enough to report; each missing section costs a 5 s wait
      }
      expect(missing).toEqual([]);
      expect(operations.length).toBeGreaterThan(50);
      // Search works under the CSP (its index is built in the page; the trigger reads "Loading..." until then).
      const trigger = page.locator('[data-testid="search-trigger"]');
      await expect.poll(async () => (await trigger.allInnerTexts()).join(""), { timeout: 30_000 }).toMatch(/Search/);
      await trigger.click();
      await page.locator('[data-component-name="Search/SearchInput"] input').fill("reference page");
      await expect
        .poll(
          async () =>
            (await page.locator('[data-component-name="Search/SearchItem"]').allInnerTexts()).map((t) =>
              t.replace(/\s+/g, " "),
            ),
          { timeout: 30_000 },
        )
        .toEqual(expect.arrayContaining([expect.stringMatching(/^GET \/docs API reference page/)]));
      expect(await cspViolations()).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("enforces its CSP in the browser: no connection, no injected script", async () => {
    const { page, cspViolations } = await watchedPage();
    try {
      await page.goto(`${base}/docs`, { waitUntil: "load" });
      const result = await page.evaluate(async () => {
        const fetched = await fetch("/openapi.json").then(
          () => "fetched",
          () => "blocked",
        );
        const s = document.createElement("script");
        s.textContent = "window.injected = true";
        document.head.append(s);
        return { fetched, injected: (window as unknown as { injected?: boolean }).injected === true };
      });
      expect(result).toEqual({ fetched: "blocked", injected: false });
      await expect
        .poll(cspViolations, { timeout: 30_000 })
        .toEqual(
          expect.arrayContaining([expect.stringMatching(/^connect-src /), expect.stringMatching(/^script-src-elem /)]),
        );
    } finally {
      await page.close();
    }
  });
});
