/**
 * `POST /api/feedback` (spec 4.4, 7): the documented JSON body stored in the state store (a Postgres
 * schema of this file), its own limiter of 3 submissions per 600 s per client IP, exact across two
 * app instances sharing a redis-server of this file, 503 with `Retry-After: 60` when that limiter is
 * unavailable, and bad bodies answered 400/413 without storing or counting anything.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { FEEDBACK_MAX_BYTES, FeedbackStore, TOO_MANY_SUBMISSIONS } from "../../api/lib/feedback.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter, openRedis } from "../../api/lib/rate-limit.ts";
import { publishFakeBuild } from "../helpers/ops.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { OwnRedis } from "../helpers/redis-server.ts";

let redis: OwnRedis;
const clients: Redis[] = [];
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let dir: string;

function app(feedback: FeedbackStore | undefined): Hono {
  return createApp({
    store: new PublishedStore(fsReader(dir), 0),
    keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "wall",
    services: { feedback },
  });
}

/** The JSON of a feedback answer: `{ status: "received", id }` (201) or `{ error }`. */
interface FeedbackAnswer {
  status?: string;
  id?: string;
  error?: string;
}

async function post(a: Hono, body: string, ip: string, contentType = "application/json") {
  const res = await a.request(
    "/api/feedback",
    { method: "POST", body, headers: { "Content-Type": contentType } },
    { incoming: { socket: { remoteAddress: ip } } },
  );
  return {
    status: res.status,
    cache: res.headers.get("cache-control"),
    retryAfter: res.headers.get("retry-after"),
    body: (await res.json()) as FeedbackAnswer,
  };
}

const count = async () => Number((await sql.query<{ n: string }>("select count(*) as n from feedback")).rows[0].n);

beforeAll(async () => {
  redis = await OwnRedis.start();
  schema = await createTestSchema("feedback");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-feedback-tests-0123");
  dir = mkdtempSync(join(tmpdir(), "ballast-feedback-"));
  publishFakeBuild(dir, "feedback-build", []);
});

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis?.stop();
  await sql?.close();
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("feedback", () => {
  it("stores a valid submission (201, no-store) with its fields; the client IP is not stored", async () => {
    const store = new FeedbackStore(sql, new KeyRateLimiter());
    const r = await post(
      app(store),
      JSON.stringify({
        message: "  The USDC chart is off by a day.  ",
        email: "Ana@Example.org",
        page: "/coins/usdc-circle",
        stablecoinId: "usdc-circle",
      }),
      "10.2.0.1",
    );
    expect(r.status).toBe(201);
    expect(r.cache).toBe("no-store");
    expect(r.body).toEqual({ status: "received", id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const [row] = await store.list(1);
    expect(row).toEqual({
      id: r.body.id,
      message: "The USDC chart is off by a day.",
      email: "ana@example.org",
      page: "/coins/usdc-circle",
      stablecoinId: "usdc-circle",
      createdAt: expect.any(Number),
    });
    expect(Math.abs(row.createdAt - Date.now() / 1000)).toBeLessThan(60);
    const columns = (
      await sql.query<{ column_name: string }>(
        "select column_name from information_schema.columns where table_name = 'feedback' and table_schema = current_schema()",
      )
    ).rows.map((c) => c.column_name);
    expect(columns.sort()).toEqual(["created_at", "email", "id", "message", "page", "stablecoin_id"]);
  });

  it("bad bodies are 400 naming the field, or 413 past the cap, and store and count nothing", async () => {
    const store = new FeedbackStore(sql, new KeyRateLimiter());
    const a = app(store);
    const before = await count();
    const cases: [string, number, string][] = [
      ["{oops", 400, "Invalid JSON body"],
      [JSON.stringify({}), 400, "Invalid field message: Invalid input: expected string, received undefined"],
      [JSON.stringify({ message: "   " }), 400, "Invalid field message: must not be empty"],
      [JSON.stringify({ message: "hi", email: "not-an-email" }), 400, "Invalid field email: Invalid email address"],
      [
        JSON.stringify({ message: "hi", stablecoinId: "USDC!" }),
        400,
        "Invalid field stablecoinId: expected a stablecoin id like usdc-circle",
      ],
      [JSON.stringify({ message: "hi", phone: "123" }), 400, "Invalid body: unknown field phone"],
      [
        JSON.stringify({ message: "x".repeat(FEEDBACK_MAX_BYTES) }),
        413,
        `Request body larger than ${FEEDBACK_MAX_BYTES} bytes`,
      ],
    ];
    for (const [body, status, error] of cases) {
      // the same IP each time: had any of these counted, the limit (3) would refuse the valid post below
      const r = await post(a, body, "10.2.0.2");
      expect([r.status, r.body.error], body.slice(0, 40)).toEqual([status, error]);
    }
    expect(await count()).toBe(before);
    expect((await post(a, JSON.stringify({ message: "ok now" }), "10.2.0.2")).status).toBe(201);
  });

  it("accepts an HTML form post (application/x-www-form-urlencoded): stored like the JSON body; bad fields are 400 naming them", async () => {
    const store = new FeedbackStore(sql, new KeyRateLimiter());
    const a = app(store);
    const form = "application/x-www-form-urlencoded; charset=UTF-8";
    // a browser form: spaces as `+`, escapes, and its blank optional inputs sent empty
    const body = "message=The+USDC+chart+is+off+%E2%80%94+by+a+day.&email=&page=%2Fcoins%2Fusdc-circle&stablecoinId=";
    const r = await post(a, body, "10.2.0.5", form);
    expect([r.status, r.cache]).toEqual([201, "no-store"]);
    // rows of one second have no order among them: find this post's row by its id
    const row = (await store.list(1000)).find((x) => x.id === r.body.id);
    // the blank inputs are absent, not empty strings (an empty email would fail its check)
    expect(row).toEqual({
      id: r.body.id,
      message: "The USDC chart is off — by a day.",
      page: "/coins/usdc-circle",
      createdAt: expect.any(Number),
    });
    const before = await count();
    const cases: [string, string][] = [
      ["message=", "Invalid field message: must not be empty"],
      ["message=hi&email=not-an-email", "Invalid field email: Invalid email address"],
      ["message=hi&phone=123", "Invalid body: unknown field phone"],
      ["message=hi&message=again", "Invalid field message: given more than once"],
    ];
    for (const [bad, error] of cases) {
      const res = await post(a, bad, "10.2.0.6", form);
      expect([res.status, res.body.error], bad).toEqual([400, error]);
    }
    expect(await count()).toBe(before);
  });

  it("3 submissions per 600 s per client IP, exact across two instances sharing Redis; the 4th is 429 with Retry-After", async () => {
    const [ra, rb] = await Promise.all([openRedis(redis.url), openRedis(redis.url)]);
    clients.push(ra, rb);
    const a = app(new FeedbackStore(sql, new KeyRateLimiter(ra)));
    const b = app(new FeedbackStore(sql, new KeyRateLimiter(rb)));
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await post(i % 2 ? b : a, JSON.stringify({ message: `note ${i}` }), "10.2.0.3")).status);
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    const r = await post(a, JSON.stringify({ message: "again" }), "10.2.0.3");
    expect(r.status).toBe(429);
    expect(r.body).toEqual({ error: TOO_MANY_SUBMISSIONS });
    expect(Number(r.retryAfter)).toBeGreaterThan(500);
    expect(Number(r.retryAfter)).toBeLessThanOrEqual(600);
    expect((await post(b, JSON.stringify({ message: "other ip" }), "10.2.0.4")).status).toBe(201);
    // the feedback limit is separate from the per-key limiter (its own Redis keys)
    expect(await ra.keys("ballast_3_per_600s*")).toHaveLength(2);
  });

  it("503 with Retry-After: 60 when the limiter is unavailable or missing, and nothing is stored", async () => {
    const dead = await openRedis("redis://127.0.0.1:1", { readyWaitMs: 50 });
    clients.push(dead);
    const before = await count();
    for (const store of [new FeedbackStore(sql, new KeyRateLimiter(dead)), new FeedbackStore(sql, null), undefined]) {
      const r = await post(app(store), JSON.stringify({ message: "hello" }), "10.2.0.5");
      expect([r.status, r.retryAfter, r.body.error, r.cache]).toEqual([
        503,
        "60",
        "Feedback temporarily unavailable",
        "no-store",
      ]);
    }
    expect(await count()).toBe(before);
  });
});
