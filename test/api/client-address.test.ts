/**
 * Per-IP limits behind proxies (`TRUSTED_PROXIES`, api/lib/client-address.ts): the budget of failed
 * key attempts (30 per minute per client IP) is counted per forwarded client only through a trusted
 * hop. A real Node listener on 127.0.0.1 (the socket peer is loopback), both the Node fast path (a
 * cached keyed GET) and the app's own path (an unknown API path); keys in a Postgres schema of this file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeListener } from "../../api/app.ts";
import { parseApiConfig } from "../../api/config.ts";
import { FAILED_KEY_ATTEMPTS_PER_MINUTE } from "../../api/lib/auth.ts";
import { clientAddress, parseTrustedProxies, TRUST_NONE } from "../../api/lib/client-address.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { listCoin, publishFakeBuild } from "../helpers/ops.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let token: string;
let dir: string;
const servers: Server[] = [];
/** Fixed service clock: a cached answer stays valid for the fast path whatever second the test runs in. */
const NOW_MS = Date.parse("2026-11-25T12:00:00Z");

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  schema = await createTestSchema("ballast_client_addr");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-client-address-0123456789");
  await keys.init();
  token = (await keys.create({ name: "warm", rateLimitPerMinute: 1000 })).token;
  dir = mkdtempSync(join(tmpdir(), "ballast-client-addr-"));
  publishFakeBuild(dir, "b1", [listCoin("usdt-tether", "USDT", 9e10, false)]);
});
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await sql?.close();
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A listener with its own limiter trusting `trusted` (`TRUSTED_PROXIES` syntax); its base URL. */
async function serve(trusted: string | undefined): Promise<string> {
  const server = createServer(
    createNodeListener({
      store: new PublishedStore(fsReader(dir), 60_000), // the pointer is read once: the fast path needs a current build
      keys,
      limiter: new KeyRateLimiter(),
      corsOrigins: [],
      clockMode: "wall",
      nowMs: () => NOW_MS,
      trustedProxies: parseTrustedProxies(trusted),
    }),
  ).listen(0, "127.0.0.1");
  servers.push(server);
  await new Promise((r) => server.once("listening", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // warm the response cache (stored on the second request): later GETs of this URL take the Node fast path
  for (let i = 0; i < 2; i++)
    expect((await fetch(`${base}/api/stablecoins`, { headers: { "X-API-Key": token } })).status).toBe(200);
  return base;
}

/** Status of a request with an invalid key and the given forwarding headers. */
const attempt = async (url: string, headers: Record<string, string> = {}) =>
  (await fetch(url, { headers: { "X-API-Key": "not-a-key", ...headers } })).status;

/** Statuses of `n` invalid-key attempts, the i-th with `headers(i)`. */
async function attempts(url: string, n: number, headers: (i: number) => Record<string, string>) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await attempt(url, headers(i)));
  return out;
}

const BUDGET = FAILED_KEY_ATTEMPTS_PER_MINUTE;
const spent = [...Array(BUDGET).fill(401), 429];

describe("per-IP limits behind a trusted proxy", () => {
  for (const path of ["/api/stablecoins", "/api/no-such-route"]) {
    it(`${path}: through a trusted hop each forwarded client has its own budget (X-Forwarded-For and CF-Connecting-IP)`, async () => {
      const base = await serve("loopback");
      const url = `${base}${path}`;
      // many clients through the one proxy: none is refused
      expect(await attempts(url, BUDGET + 5, (i) => ({ "X-Forwarded-For": `198.51.100.${i + 1}` }))).not.toContain(429);
      // one client spends its own budget; a prepended (forged) entry does not give it a new one
      expect(await attempts(url, BUDGET + 1, (i) => ({ "X-Forwarded-For": `10.9.${i}.1, 203.0.113.50` }))).toEqual(
        spent,
      );
      // …while another client through the same proxy is still admitted to try
      expect(await attempt(url, { "X-Forwarded-For": "203.0.113.51" })).toBe(401);
      // CF-Connecting-IP names the client the same way
      expect(await attempt(url, { "CF-Connecting-IP": "203.0.113.50" })).toBe(429);
      expect(await attempts(url, BUDGET + 1, () => ({ "CF-Connecting-IP": "203.0.113.60" }))).toEqual(spent);
      expect(await attempt(url, { "CF-Connecting-IP": "203.0.113.61" })).toBe(401);
    });

    it(`${path}: through an untrusted hop the forwarding headers are ignored: every client shares the peer's budget`, async () => {
      for (const trusted of [undefined, "10.0.0.0/8"]) {
        const url = `${await serve(trusted)}${path}`;
        expect(
          await attempts(
            url,
            BUDGET + 1,
            (i): Record<string, string> =>
              i % 2
                ? { "X-Forwarded-For": `198.51.100.${i + 1}` }
                : { "CF-Connecting-IP": `198.51.100.${i + 1}`, "X-Forwarded-For": `198.51.100.${i + 1}` },
          ),
        ).toEqual(spent);
      }
    });
  }

  it("a hop count trusts that many hops nearest the API, whatever their address", async () => {
    const url = `${await serve("1")}/api/no-such-route`;
    // one trusted hop (the socket peer): the rightmost X-Forwarded-For entry is the client
    expect(
      await attempts(url, BUDGET + 1, (i) => ({ "X-Forwarded-For": `198.51.100.${i + 1}, 203.0.113.70` })),
    ).toEqual(spent);
    expect(await attempt(url, { "X-Forwarded-For": "203.0.113.71" })).toBe(401);
  });
});

describe("clientAddress", () => {
  const h =
    (headers: Record<string, string>) =>
    (name: string): string | undefined =>
      Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  const cidr = parseTrustedProxies("10.0.0.0/8, 2001:db8::/32");

  it("walks X-Forwarded-For right to left through trusted hops to the first untrusted address", () => {
    const xff = { "X-Forwarded-For": "203.0.113.1, 198.51.100.2, 10.1.1.1" };
    expect(clientAddress("10.0.0.5", h(xff), cidr)).toBe("198.51.100.2");
    expect(clientAddress("::ffff:10.0.0.5", h(xff), cidr)).toBe("198.51.100.2");
    expect(clientAddress("2001:db8::1", h(xff), cidr)).toBe("198.51.100.2");
    expect(clientAddress("192.0.2.9", h(xff), cidr)).toBe("192.0.2.9");
    expect(clientAddress("10.0.0.5", h(xff), TRUST_NONE)).toBe("10.0.0.5");
    expect(clientAddress("10.0.0.5", h({ "X-Forwarded-For": "10.2.2.2, 10.3.3.3" }), cidr)).toBe("10.2.2.2");
    expect(clientAddress("10.0.0.5", h({ "X-Forwarded-For": "garbage, 198.51.100.3" }), cidr)).toBe("198.51.100.3");
    expect(clientAddress("10.0.0.5", h({ "X-Forwarded-For": "10.4.4.4, garbage" }), cidr)).toBe("10.0.0.5");
    expect(clientAddress("10.0.0.5", h({}), cidr)).toBe("10.0.0.5");
    expect(clientAddress(undefined, h(xff), cidr)).toBe("local");
  });

  it("hop counts: the n nearest hops; 0 or unset trusts none", () => {
    const xff = h({ "X-Forwarded-For": "203.0.113.1, 198.51.100.2, 192.0.2.3" });
    expect(clientAddress("192.0.2.200", xff, parseTrustedProxies("1"))).toBe("192.0.2.3");
    expect(clientAddress("192.0.2.200", xff, parseTrustedProxies("2"))).toBe("198.51.100.2");
    expect(clientAddress("192.0.2.200", xff, parseTrustedProxies("9"))).toBe("203.0.113.1");
    expect(clientAddress("192.0.2.200", xff, parseTrustedProxies("0"))).toBe("192.0.2.200");
    expect(clientAddress("192.0.2.200", xff, parseTrustedProxies(undefined))).toBe("192.0.2.200");
  });

  it("CF-Connecting-IP counts only from a trusted peer", () => {
    const cf = h({ "CF-Connecting-IP": "203.0.113.9", "X-Forwarded-For": "198.51.100.1" });
    expect(clientAddress("10.0.0.5", cf, cidr)).toBe("203.0.113.9");
    expect(clientAddress("192.0.2.9", cf, cidr)).toBe("192.0.2.9");
    expect(clientAddress("127.0.0.1", cf, parseTrustedProxies("loopback"))).toBe("203.0.113.9");
  });

  it("invalid settings are refused, naming the entry", () => {
    for (const bad of ["10.0.0.0/33", "cloudflare", "10.0.0.0/8/1", "1.2.3", "-1"])
      expect(() => parseTrustedProxies(bad)).toThrow(/TRUSTED_PROXIES/);
    // the server's config check refuses them at start
    const parsed = parseApiConfig({ TRUSTED_PROXIES: "10.0.0.0/8, cloudflare" });
    expect(parsed.ok ? "" : parsed.error).toMatch(/TRUSTED_PROXIES: "cloudflare" is not an address/);
    expect(parseApiConfig({ TRUSTED_PROXIES: "loopback, 173.245.48.0/20, 2400:cb00::/32" }).ok).toBe(true);
  });
});
