import { startLocalServer } from "../helpers/local-server.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { startServer } from "../../api/server.ts";
import { buildRecorded } from "../helpers/build-once.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let server: Awaited<ReturnType<typeof startServer>>;
let base = "";

beforeAll(async () => {
  const { dir } = await buildRecorded("ballast-fast-");
  schema = await createTestSchema("ballast_fast");
  server = await startLocalServer(dir, schema.url, "pepper-for-fast-path-tests-0123", {
    SITE_PROXY_SECRET: "site-secret-for-fast-path-0123",
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.close();
  await schema?.drop();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers });
const headersOf = (r: Response) =>
  Object.fromEntries([...r.headers].filter(([k]) => !["date", "connection", "keep-alive"].includes(k)));

describe("Node fast path over real HTTP (cached keyed GETs bypass the framework)", () => {
  it("a repeated request answers the same bytes and headers as the first (app path)", async () => {
    const { token } = await server.keys.create({ name: "fast" });
    const path = "/api/stablecoin-summary/usdt-tether";
    for (const enc of ["", "gzip", "br"]) {
      const h: Record<string, string> = { "X-API-Key": token, ...(enc ? { "Accept-Encoding": enc } : {}) };
      const first = await get(path, h);
      const firstBody = Buffer.from(await first.arrayBuffer());
      // The response is cached from the second request (admission), so the third takes the fast path.
      for (let i = 0; i < 2; i++) {
        const again = await get(path, h);
        expect(again.status).toBe(200);
        expect(Buffer.from(await again.arrayBuffer()).equals(firstBody)).toBe(true);
        const a = headersOf(first);
        const b = headersOf(again);
        // The data age may tick between the requests (in X-Data-Age and a stale Warning); everything else is identical.
        for (const h of [a, b]) {
          delete h["x-data-age"];
          if (h.warning) h.warning = h.warning.replace(/\(\d+s old/, "(Ns old");
        }
        expect(b).toEqual(a);
      }
    }
  });

  it("still checks the key and the per-key limit on a cached URL", async () => {
    const { token } = await server.keys.create({ name: "small", rateLimitPerMinute: 2 });
    const path = "/api/stablecoin-charts";
    // Cached from an earlier key's requests, so these take the fast path (key verified here: no I/O).
    const { token: warm } = await server.keys.create({ name: "warm" });
    for (let i = 0; i < 2; i++) expect((await get(path, { "X-API-Key": warm })).status).toBe(200);
    expect((await get(path, { "X-API-Key": token })).status).toBe(200);
    expect((await get(path, { "X-API-Key": token })).status).toBe(200);
    const limited = await get(path, { "X-API-Key": token });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: "Rate limit exceeded" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const none = await get(path);
    expect(none.status).toBe(401);
    // a website-internal request for the same cached URL takes the app path and its own lane (no key, no quota)
    expect((await get(path, { "X-Ballast-Site-Proxy-Secret": "site-secret-for-fast-path-0123" })).status).toBe(200);
    expect((await get(path, { "X-Ballast-Site-Proxy-Secret": "wrong-secret-for-fast-path-012" })).status).toBe(401);
    const wrong = await get(path, { "X-API-Key": `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("vary")).toContain("Origin");
  });
});
