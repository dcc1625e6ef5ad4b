import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { JobRunner } from "../../api/lib/jobs.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { MaintenanceGate } from "../../api/lib/maintenance.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { ADMIN_ROUTES } from "../../api/routes/admin.ts";
import { ROUTES } from "../../api/routes/index.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { listCoin, publishFakeBuild, signJwt, startJwksServer, testOpsApp, type JwksServer } from "../helpers/ops.ts";

// Issue 19 item 8: every declared route against every class of credential, on both listeners. The
// outcome asserted is the lane's decision (admitted or not, and with which status), never the data.

const AUD = "ops-matrix-aud",
  ISS = "https://ballast-matrix.cloudflareaccess.com";
const TOKEN_ID = "svc-matrix-id-0001",
  TOKEN_SECRET = "svc-matrix-secret-0123456789abcdef";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let jwks: JwksServer;
let ops: Hono;
/** A public app of its own (its own per-IP budget of invalid keys: the matrix sends 5 per route). */
let freshPub: () => Hono;
let jobs: JobRunner;
const secrets: string[] = [];
const logged: string[] = [];
let restore: (() => void) | undefined;

/** Credential classes of the public lane: header sets. */
const keyClasses: Record<string, Record<string, string>> = {};

beforeAll(async () => {
  process.env.BALLAST_LOG = "debug";
  // Everything the process logs during the matrix (stdout and stderr), to check no secret leaks.
  const out = process.stdout.write.bind(process.stdout),
    err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    logged.push(String(chunk));
    return out(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    logged.push(String(chunk));
    return err(chunk, ...rest);
  }) as typeof process.stderr.write;
  restore = () => {
    process.stdout.write = out;
    process.stderr.write = err;
  };

  jwks = await startJwksServer();
  schema = await createTestSchema("ballast_matrix");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-matrix-tests-0123456789");
  await keys.init();
  const dir = mkdtempSync(join(tmpdir(), "ballast-matrix-"));
  publishFakeBuild(dir, "m1", [listCoin("usdt-tether", "USDT", 9e10, false)]);
  const store = new PublishedStore(fsReader(dir), 0);
  const maintenance = new MaintenanceGate(sql);
  freshPub = () =>
    createApp({ store, keys, limiter: new KeyRateLimiter(), corsOrigins: [], clockMode: "wall", maintenance });
  jobs = new JobRunner(sql, { executor: async () => ({ exitCode: 0, stdout: "[]", stderr: "" }) });
  ops = testOpsApp({
    jwksUrl: jwks.url,
    access: { audience: AUD, issuer: ISS, serviceToken: { id: TOKEN_ID, secret: TOKEN_SECRET } },
    keys,
    store,
    maintenance,
    jobs,
    ledgerPath: join(dir, "ledger.duckdb"),
    dataDir: dir,
    jobWaitMs: 100,
  });

  const standard = (
    await keys.create({ name: "matrix-standard", rateLimitPerMinute: 10_000 }, { maxRateLimitPerMinute: 10_000 })
  ).token;
  const donor = (await keys.create({ name: "matrix-donor", tier: "donor" })).token;
  const selfServe = (await keys.createLegacySelfServe({ name: "matrix-self-serve" })).token;
  const expired = (
    await keys.createLegacySelfServe({ name: "matrix-expired", issuedAt: Math.floor(Date.now() / 1000) - 61 * 86400 })
  ).token;
  const revoked = (await keys.createLegacySelfServe({ name: "matrix-revoked" })).token;
  await keys.revokeSelfServe(revoked.split("_")[2]);
  secrets.push(standard, donor, selfServe, expired, revoked, TOKEN_SECRET);
  Object.assign(keyClasses, {
    none: {},
    malformed: { "X-API-Key": "not-a-key" },
    unknown: { "X-API-Key": `bl_live_${"0".repeat(16)}_${"A".repeat(32)}` },
    standard: { "X-API-Key": standard },
    donor: { "X-API-Key": donor },
    "self-serve": { "X-API-Key": selfServe },
    "self-serve expired": { "X-API-Key": expired },
    "self-serve revoked": { "X-API-Key": revoked },
  });
});
afterAll(async () => {
  restore?.();
  process.env.BALLAST_LOG = "silent";
  await jobs?.close();
  await sql?.close();
  await schema?.drop();
  await jwks?.close();
});

/** The request path of a route, every `:param` filled with a plausible value. */
const pathOf = (p: string) =>
  p
    .replace(":stablecoinId", "usdt-tether")
    .replace(":snapshot", "2023-03-11.json")
    .replace(":date", "2023-03-11")
    .replace(/:([A-Za-z]+)/g, "x1");
/** Keyed-lane classes that must be admitted, and those that must be refused with 401. */
const ADMITTED = ["standard", "donor", "self-serve"];
const REFUSED = ["none", "malformed", "unknown", "self-serve expired", "self-serve revoked"];

describe("public listener: every declared route × every key class", () => {
  const publicRoutes = ROUTES.filter((r) => r.kind === "json" || r.kind === "static");
  it.each(publicRoutes.map((r) => [`${r.method} ${r.path} (${r.lane})`, r] as const))(
    "%s",
    async (_name, route) => {
      const app = freshPub();
      for (const [cls, headers] of Object.entries(keyClasses)) {
        const res = await app.request(pathOf(route.path), {
          method: route.method,
          headers: { ...headers, ...(route.method === "POST" ? { "Content-Type": "application/json" } : {}) },
          body: route.method === "POST" ? "{}" : undefined,
        });
        const where = `${route.method} ${route.path} with ${cls} → ${res.status}`;
        expect(res.status, where).not.toBe(500);
        if (route.lane === "apiKey") {
          if (REFUSED.includes(cls)) expect(res.status, where).toBe(401);
          if (ADMITTED.includes(cls)) expect([401, 403], where).not.toContain(res.status);
        } else if (route.lane === "public" || route.lane === "signed-wallet") {
          // exempt routes judge no key: a bad one is neither needed nor refused
          expect([401], where).not.toContain(res.status);
        } else if (route.lane === "site" || route.lane === "webhook") {
          expect(res.status, where).toBe(404); // their secrets are not configured here
        }
      }
    },
    60_000,
  );

  it("no operator route is reachable on the public listener, whatever the credential", async () => {
    const jwt = signJwt(
      jwks.privateKey,
      { aud: [AUD], iss: ISS, sub: "u", exp: Math.floor(Date.now() / 1000) + 600 },
      { kid: jwks.kid },
    );
    for (const route of ADMIN_ROUTES) {
      const pub = freshPub();
      for (const headers of [
        ...Object.values(keyClasses),
        { "Cf-Access-Jwt-Assertion": jwt, "X-Ballast-Admin": "1" },
        { "CF-Access-Client-Id": TOKEN_ID, "CF-Access-Client-Secret": TOKEN_SECRET },
      ]) {
        expect(
          (await pub.request(pathOf(route.path), { method: route.method, headers })).status,
          `${route.method} ${route.path}`,
        ).toBe(404);
      }
    }
  });
});

describe("operator listener: every operator route × every operator credential", () => {
  const now = () => Math.floor(Date.now() / 1000);
  const jwt = (over: Record<string, unknown>) =>
    signJwt(
      jwks.privateKey,
      { aud: [AUD], iss: ISS, sub: "u", email: "ops@ballast.example", exp: now() + 600, ...over },
      { kid: jwks.kid },
    );
  const classes = (): Record<string, Record<string, string>> => ({
    none: {},
    "public key": keyClasses.standard,
    "jwt expired": { "Cf-Access-Jwt-Assertion": jwt({ exp: now() - 3600 }) },
    "jwt wrong audience": { "Cf-Access-Jwt-Assertion": jwt({ aud: ["another-app"] }) },
    "service token wrong secret": { "CF-Access-Client-Id": TOKEN_ID, "CF-Access-Client-Secret": `${TOKEN_SECRET}x` },
    "jwt valid": { "Cf-Access-Jwt-Assertion": jwt({}) },
    "service token": { "CF-Access-Client-Id": TOKEN_ID, "CF-Access-Client-Secret": TOKEN_SECRET },
  });
  it.each(ADMIN_ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))(
    "%s",
    async (_name, route) => {
      for (const [cls, headers] of Object.entries(classes())) {
        // a mutation without X-Ballast-Admin is judged after authentication: 403 for an operator, 401 for anyone else
        const res = await ops.request(pathOf(route.path), { method: route.method, headers });
        const where = `${route.method} ${route.path} with ${cls} → ${res.status}`;
        expect(res.headers.get("cache-control"), where).toBe("no-store");
        if (cls === "jwt valid" || cls === "service token") {
          expect([401, 500], where).not.toContain(res.status);
          if (route.mutating) expect(res.status, where).toBe(403);
        } else {
          expect(res.status, where).toBe(401);
        }
      }
    },
    60_000,
  );
});

describe("secrets never logged", () => {
  it("no key, token secret or JWT appears in anything the process wrote during the matrix", () => {
    const text = logged.join("");
    for (const s of secrets) {
      expect(text.includes(s), `a secret (${s.slice(0, 12)}…) was logged`).toBe(false);
      // nor the secret part of a key on its own
      const part = s.split("_")[2];
      if (part) expect(text.includes(part)).toBe(false);
    }
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./);
  });
});
