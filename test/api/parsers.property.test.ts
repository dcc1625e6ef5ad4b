import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { ROUTES } from "../../api/routes/index.ts";
import type { RouteDecl } from "../../api/routes/route.ts";
import { buildRecorded } from "../helpers/build-once.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

// Issue 19 item 8: property tests of every query, path and body parser of the route table, over a
// real build. Whatever a client sends, a route answers a deliberate status (never 500), a 400 names
// the parameter it refused, and a refused request changes no state (the key's usage is untouched).

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let app: ReturnType<typeof createApp>;
let token: string;

beforeAll(async () => {
  const { dir } = await buildRecorded();
  schema = await createTestSchema("ballast_props");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  token = (await keys.create({ name: "props", rateLimitPerMinute: 10_000 }, { maxRateLimitPerMinute: 10_000 })).token;
  app = createApp({
    store: new PublishedStore(fsReader(dir)),
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: ["https://ballast.example"],
    clockMode: "auto",
  });
});
afterAll(async () => {
  await sql?.close();
  await schema?.drop();
});

/** Hostile query values: empty, signs, exponents, impossible dates, traversal, control and astral characters, very long. */
const hostileValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom(
    "",
    " ",
    "-1",
    "0",
    "1e309",
    "NaN",
    "Infinity",
    "true",
    "2023-02-30",
    "2023-13-01",
    "9999-99-99",
    "%",
    "%00",
    "../../etc/passwd",
    "null",
    "[]",
    "{}",
    "a".repeat(5000),
  ),
);
/** An identifier a client may send: a parameter name of the route, or an unknown one. */
const paramName = (declared: string[]) =>
  declared.length
    ? fc.oneof(fc.constantFrom(...declared), fc.string({ minLength: 1, maxLength: 12 }))
    : fc.string({ minLength: 1, maxLength: 12 });

/** Statuses a read route may answer on purpose (spec 7); 500 is never one of them for client input. */
const DELIBERATE = new Set([200, 304, 400, 404, 405, 413, 429, 503]);

const readRoutes = ROUTES.filter(
  (r): r is RouteDecl => r.method === "GET" && r.lane !== "admin" && r.lane !== "site" && r.lane !== "webhook",
);
const writeRoutes = ROUTES.filter((r) => r.method === "POST" && r.lane !== "admin");

/** The route's path with every `:param` replaced by `values` (URL-encoded), in order. */
function fillPath(path: string, values: string[]): string {
  let i = 0;
  return path.replace(/:([A-Za-z]+)/g, () => encodeURIComponent(values[i++] ?? "x") || "x");
}

async function usage(): Promise<unknown> {
  const { rows } = await sql.query("select * from api_keys order by key_prefix");
  return rows;
}

describe("every query and path parser (fast-check)", () => {
  it.each(readRoutes.map((r) => [r.path, r] as const))(
    "%s: any query answers a deliberate status; a 400 names the refused parameter",
    async (_path, route) => {
      const declared = Object.keys((route.query as { shape?: Record<string, unknown> } | undefined)?.shape ?? {});
      const pathParams = [...route.path.matchAll(/:([A-Za-z]+)/g)].length;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(paramName(declared), hostileValue), { maxLength: 4 }),
          fc.array(hostileValue, { minLength: pathParams, maxLength: pathParams }),
          async (pairs, segments) => {
            const qs = new URLSearchParams(pairs).toString();
            const url = `${fillPath(route.path, segments)}${qs ? `?${qs}` : ""}`;
            const res = await app.request(url, { headers: { "X-API-Key": token } });
            expect(DELIBERATE.has(res.status), `${url} → ${res.status}`).toBe(true);
            if (res.status === 400 && route.kind === "json") {
              const body = (await res.json()) as { error: string };
              // the refused parameter: one sent, a path segment, or a required one left out
              const named = [
                ...pairs.map(([k]) => k),
                ...declared,
                ...[...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, n]) => n),
              ];
              expect(
                named.some((n) => body.error.includes(n)),
                `${url}: ${body.error}`,
              ).toBe(true);
            }
          },
        ),
        { numRuns: 25 },
      );
    },
    120_000,
  );
});

describe("every write route's body parser (fast-check)", () => {
  it.each(writeRoutes.map((r) => [r.path, r] as const))(
    "%s: any body answers a deliberate status and changes no key state",
    async (_path, route) => {
      const before = await usage();
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.json().map((j) => j as string),
            fc.string({ maxLength: 200 }),
            fc.constant("x".repeat(6000)),
            fc.constant(""),
          ),
          fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded"),
          async (body, type) => {
            const res = await app.request(route.path, {
              method: "POST",
              body,
              headers: { "Content-Type": type, "X-Forwarded-For": "203.0.113.9" },
            });
            expect(res.status === 500 || res.status === 502 ? `${res.status} ${await res.text()}` : "deliberate").toBe(
              "deliberate",
            );
            expect(res.status).toBeGreaterThanOrEqual(200);
          },
        ),
        { numRuns: 30 },
      );
      expect(await usage()).toEqual(before);
    },
    120_000,
  );
});
