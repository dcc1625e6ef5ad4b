import { Api } from "grammy";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { AlertDispatcher, type AlertDispatcherOptions, startAlertLoop } from "../../api/lib/telegram/dispatch.ts";
import type { ServingBuild } from "../../api/lib/published.ts";
import type { FollowerLookup } from "../../api/lib/telegram/service.ts";
import { depegEvent, freezeEvent, gradesPayload, MemoryPublished, T0 } from "../helpers/alert-fixtures.ts";
import { type BotApiServer, startBotApiServer } from "../helpers/bot-api-server.ts";
import { must } from "../helpers/must.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { noDispatchRunYet } from "../helpers/telegram.ts";

process.env.BALLAST_LOG = "silent";
const DAY = 86_400;
const T1 = T0 + DAY;
const TOKEN = "123456:TEST-token";

/** FollowerLookup over a fixed map (the bot's real store is tested with the bot). */
function mapFollowers(map: Record<string, string[]>): FollowerLookup & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    asked,
    async followersOf(coinIds) {
      asked.push([...coinIds]);
      return new Map(coinIds.filter((id) => map[id]?.length).map((id) => [id, map[id]]));
    },
  };
}

const usda = depegEvent({ id: 101, stablecoinId: "usda-angle", symbol: "USDA", startedAt: T1 - 3600 });
const grades = (asOf: number) => gradesPayload(asOf, { "usda-angle": ["USDA", "C", 58], tether: ["USDT", "B", 72] });

let bot: BotApiServer;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  bot = await startBotApiServer();
});
afterAll(async () => {
  await bot.close();
});
afterEach(async () => {
  bot.calls.length = 0;
  while (cleanups.length) await cleanups.pop()?.();
});

/** A fresh Postgres schema, a published store with the baseline build b0, a clock at `startSec`, and a dispatcher factory over them. */
async function setup(followers: Record<string, string[]>, startSec = T1 + 600) {
  const schema = await createTestSchema("alerts");
  const sql: SqlClient = await openSqlClient({
    databaseUrl: schema.url,
    pgliteDir: "",
    queryTimeoutMs: 5000,
    connectTimeoutMs: 5000,
  });
  cleanups.push(async () => {
    await sql.close();
    await schema.drop();
  });
  const pub = new MemoryPublished();
  const clock = { sec: startSec };
  const lookup = mapFollowers(followers);
  const make = (over: Partial<AlertDispatcherOptions> = {}) =>
    new AlertDispatcher({
      sql,
      read: pub.reader,
      api: new Api(TOKEN, { apiRoot: bot.apiRoot, timeoutSeconds: 5 }),
      followers: lookup,
      nowMs: () => clock.sec * 1000,
      ...over,
    });
  const b0 = pub.publish("b0", T0, { depeg: [], freezes: [], grades: grades(T0) });
  const rows = async () =>
    (
      await sql.query<{
        alert_id: string;
        chat_id: string;
        status: string;
        attempts: number;
        next_attempt_at: string;
        last_error: string | null;
      }>(
        "select alert_id, chat_id, status, attempts, next_attempt_at, last_error from alert_deliveries order by alert_id, chat_id",
      )
    ).rows.map((r) => ({ ...r, next_attempt_at: Number(r.next_attempt_at) }));
  return { sql, pub, clock, lookup, make, b0, rows };
}

const sends = () => bot.callsOf("sendMessage");

describe("alert dispatch against a local Bot API server", () => {
  it("the first build is the baseline (nothing sent); a new depeg incident then gives exactly one message per following chat", async () => {
    const t = await setup({ "usda-angle": ["111", "-100222", "333"], tether: ["444"] });
    const d = t.make();
    const first = await d.runOnce(t.b0);
    expect(first.status).toBe("baseline");
    expect(first.enqueue).toMatchObject({ action: "baseline", deliveries: 0 });
    expect(sends()).toHaveLength(0);
    expect(t.lookup.asked).toEqual([]);

    const b1 = t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) });
    const run = await d.runOnce(b1);
    expect(run).toMatchObject({
      status: "ok",
      enqueue: { action: "enqueued", previousBuildId: "b0", deliveries: 3 },
      deliver: { sent: 3, retried: 0, failed: 0 },
    });
    expect(t.lookup.asked).toEqual([["usda-angle"]]);
    const calls = sends();
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => String(c.params.chat_id)).sort()).toEqual(["-100222", "111", "333"]);
    expect(new Set(calls.map((c) => c.token))).toEqual(new Set([TOKEN]));
    const text = must(run.enqueue, "the run's enqueue result").alerts[0].text;
    expect(text).toMatch(/^USDA depeg: 369 bps \(3\.69%\) below its USD peg at peak\./);
    expect(text).toContain("Details: /api/depeg-events?stablecoin=usda-angle");
    for (const c of calls) expect(c.params.text).toBe(text);
    expect((await t.rows()).map((r) => [r.alert_id, r.chat_id, r.status, r.attempts])).toEqual([
      ["depeg:101", "-100222", "sent", 1],
      ["depeg:101", "111", "sent", 1],
      ["depeg:101", "333", "sent", 1],
    ]);
  });

  it("re-running, or a second instance, never enqueues or sends twice", async () => {
    const t = await setup({ "usda-angle": ["111", "222", "333"] });
    const a = t.make();
    const b = t.make();
    await a.enqueue(t.b0);
    const b1 = t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) });
    // Both instances see b1 at the same moment: one moves the state, the other stores nothing.
    const both = await Promise.all([a.enqueue(b1), b.enqueue(b1)]);
    expect(both.reduce((n, r) => n + r.deliveries, 0)).toBe(3);
    expect(both.filter((r) => r.action === "enqueued")).toHaveLength(1);
    expect(both.every((r) => ["enqueued", "raced", "unchanged"].includes(r.action))).toBe(true);
    // Again, on either instance: unchanged.
    expect((await a.enqueue(b1)).action).toBe("unchanged");
    expect((await b.enqueue(b1)).action).toBe("unchanged");
    // Both deliver at once: every row is sent exactly once.
    const [ra, rb] = await Promise.all([a.deliver(), b.deliver()]);
    expect(ra.sent + rb.sent).toBe(3);
    expect(
      sends()
        .map((c) => String(c.params.chat_id))
        .sort(),
    ).toEqual(["111", "222", "333"]);
    await Promise.all([a.runOnce(b1), b.runOnce(b1)]);
    expect(sends()).toHaveLength(3);
    expect((await t.rows()).every((r) => r.status === "sent")).toBe(true);
  });

  it("an instance that computed against an outdated state stores nothing and never moves the state back", async () => {
    const t = await setup({ "usda-angle": ["111"], tether: ["222"] });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = t.make({
      followers: {
        followersOf: async (ids) => {
          await gate;
          return new Map(ids.map((id) => [id, id === "tether" ? ["222"] : ["111"]]));
        },
      },
    });
    const fast = t.make();
    await fast.enqueue(t.b0);
    // USDA is downgraded C → D in b1 and stays D in b2: one grade change, whichever build reports it.
    const downgraded = (asOf: number) =>
      gradesPayload(asOf, { "usda-angle": ["USDA", "D", 40], tether: ["USDT", "B", 72] });
    const b1 = t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: downgraded(T1) });
    const usdt = depegEvent({ id: 202, stablecoinId: "tether", symbol: "USDT", startedAt: T1 + 60 });
    const b2 = t.pub.publish("b2", T1 + 3600, { depeg: [usda, usdt], freezes: [], grades: downgraded(T1 + 3600) });
    const pending = slow.enqueue(b1); // reads state b0, waits in the follower lookup
    await new Promise((r) => setTimeout(r, 50));
    expect((await fast.enqueue(b2)).action).toBe("enqueued"); // b0 → b2: both incidents
    release();
    expect(await pending).toMatchObject({ action: "raced", deliveries: 0, alerts: [] });
    expect((await t.rows()).map((r) => [r.alert_id, r.chat_id])).toEqual([
      ["depeg:101", "111"],
      ["depeg:202", "222"],
      ["grade:usda-angle:b2", "111"],
    ]);
    expect((await fast.enqueue(b2)).action).toBe("unchanged");
    expect((await t.sql.query("select last_build_id from alert_dispatch_state")).rows).toEqual([
      { last_build_id: "b2" },
    ]);
  });

  it("a 429 with retry_after is retried after the wait, not before; the rest of the batch waits too", async () => {
    const t = await setup({ "usda-angle": ["111", "222"] });
    const d = t.make();
    await d.enqueue(t.b0);
    await d.enqueue(t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) }));
    bot.failNext("sendMessage", {
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 30",
      parameters: { retry_after: 30 },
    });
    const now = t.clock.sec;
    expect(await d.deliver(now)).toEqual({ sent: 0, retried: 1, failed: 0, released: 1 });
    expect(sends()).toHaveLength(1);
    expect((await t.rows()).map((r) => [r.chat_id, r.status, r.attempts, r.next_attempt_at])).toEqual([
      ["111", "pending", 1, now + 30],
      ["222", "pending", 0, now + 30],
    ]);
    expect((await t.rows())[0].last_error).toBe("429 Too Many Requests: retry after 30");
    expect(await d.deliver(now + 29)).toEqual({ sent: 0, retried: 0, failed: 0, released: 0 });
    expect(sends()).toHaveLength(1);
    expect(await d.deliver(now + 30)).toEqual({ sent: 2, retried: 0, failed: 0, released: 0 });
    expect(sends().map((c) => String(c.params.chat_id))).toEqual(["111", "111", "222"]);
    expect((await t.rows()).map((r) => [r.chat_id, r.status, r.attempts])).toEqual([
      ["111", "sent", 2],
      ["222", "sent", 1],
    ]);
  });

  it("a 403 (bot blocked) fails the delivery at once, is never retried, and reports the chat gone", async () => {
    const t = await setup({ "usda-angle": ["111"] });
    const gone: string[] = [];
    const d = t.make({
      onChatGone: (chat) => {
        gone.push(chat);
      },
    });
    await d.enqueue(t.b0);
    await d.enqueue(t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) }));
    bot.failNext("sendMessage", { ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" });
    expect(await d.deliver()).toEqual({ sent: 0, retried: 0, failed: 1, released: 0 });
    expect(gone).toEqual(["111"]);
    expect((await t.rows()).map((r) => [r.status, r.attempts, r.last_error])).toEqual([
      ["failed", 1, "403 Forbidden: bot was blocked by the user"],
    ]);
    expect(await d.deliver(t.clock.sec + 10 * DAY)).toEqual({ sent: 0, retried: 0, failed: 0, released: 0 });
    expect(sends()).toHaveLength(1);
  });

  it("server errors back off exponentially (60 s, 120 s) and fail after maxAttempts", async () => {
    const t = await setup({ "usda-angle": ["111"] });
    const d = t.make({ maxAttempts: 3 });
    await d.enqueue(t.b0);
    await d.enqueue(t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) }));
    const err = { ok: false as const, error_code: 502, description: "Bad Gateway" };
    bot.failNext("sendMessage", err, err, err);
    const now = t.clock.sec;
    expect((await d.deliver(now)).retried).toBe(1);
    expect((await t.rows())[0]).toMatchObject({ status: "pending", attempts: 1, next_attempt_at: now + 60 });
    expect(await d.deliver(now + 59)).toMatchObject({ retried: 0, sent: 0 });
    expect((await d.deliver(now + 60)).retried).toBe(1);
    expect((await t.rows())[0]).toMatchObject({ status: "pending", attempts: 2, next_attempt_at: now + 60 + 120 });
    expect((await d.deliver(now + 180)).failed).toBe(1);
    expect((await t.rows())[0]).toMatchObject({ status: "failed", attempts: 3, last_error: "502 Bad Gateway" });
    expect(sends()).toHaveLength(3);
    expect([d.backoffSec(1), d.backoffSec(2), d.backoffSec(5), d.backoffSec(12)]).toEqual([60, 120, 960, 3600]);
  });

  it("grade changes and large freezes reach their followers; a chat following two coins gets both", async () => {
    const t = await setup({ "usda-angle": ["111"], tether: ["111", "222"] });
    const d = t.make();
    await d.enqueue(t.b0);
    const b1 = t.pub.publish("b1", T1, {
      depeg: [],
      grades: gradesPayload(T1, { "usda-angle": ["USDA", "D", 40], tether: ["USDT", "B", 72] }),
      freezes: [
        freezeEvent({
          id: "f-big",
          stablecoinId: "tether",
          stablecoin: "USDT",
          amountUsdAtEvent: 2e6,
          timestamp: T1 - 60,
        }),
        freezeEvent({ id: "f-small", stablecoinId: "tether", stablecoin: "USDT", amountUsdAtEvent: 5e5 }),
      ],
    });
    const run = await d.runOnce(b1);
    expect(must(run.enqueue, "the run's enqueue result").alerts.map((a) => a.id)).toEqual([
      "grade:usda-angle:b1",
      "freeze:f-big",
    ]);
    expect((await t.rows()).map((r) => [r.alert_id, r.chat_id])).toEqual([
      ["freeze:f-big", "111"],
      ["freeze:f-big", "222"],
      ["grade:usda-angle:b1", "111"],
    ]);
    const byChat = (chat: string) =>
      sends()
        .filter((c) => String(c.params.chat_id) === chat)
        .map((c) => String(c.params.text).split("\n")[0]);
    expect(byChat("111")).toEqual([
      "USDA safety grade downgraded: C → D (score 58 → 40 of 100, ballast-safety-score-v1).",
      expect.stringMatching(/^USDT large freeze: USD 2\.00M/),
    ]);
    expect(byChat("222")).toEqual([expect.stringMatching(/^USDT large freeze: USD 2\.00M/)]);
  });

  it("a failing follower lookup fails the run (status error, state not moved) but queued deliveries still go out", async () => {
    const t = await setup({ "usda-angle": ["111"] });
    const d = t.make();
    await d.enqueue(t.b0);
    await d.enqueue(t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) }));
    const broken = t.make({
      followers: {
        followersOf: async () => {
          throw new Error("bot store down");
        },
      },
    });
    const usdt = depegEvent({ id: 202, stablecoinId: "tether", symbol: "USDT", startedAt: T1 + 60 });
    const b2 = t.pub.publish("b2", T1 + 3600, { depeg: [usda, usdt], freezes: [], grades: grades(T1 + 3600) });
    expect(await broken.runOnce(b2)).toMatchObject({
      status: "error",
      error: "bot store down",
      enqueue: null,
      deliver: { sent: 1 },
    });
    expect(sends().map((c) => String(c.params.chat_id))).toEqual(["111"]);
    expect(await d.status()).toMatchObject({ lastDispatchStatus: "error", pendingDeliveries: 0 });
    expect((await d.enqueue(b2)).action).toBe("enqueued");
  });

  it("a pruned previous build makes the new one a baseline; an older build (rollback) is left alone", async () => {
    const t = await setup({ "usda-angle": ["111"] });
    const d = t.make();
    await d.enqueue(t.b0);
    t.pub.objects.delete("builds/b0/manifest.json");
    expect((await d.runOnce(t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) }))).status).toBe(
      "rebaseline",
    );
    expect(sends()).toHaveLength(0);
    expect(
      (await d.enqueue(t.pub.publish("old", T0 - DAY, { depeg: [], freezes: [], grades: grades(T0) }))).action,
    ).toBe("older");
    expect((await d.status()).lastDispatchStatus).toBe("rebaseline");
  });
});

describe("dispatch loop", () => {
  it("runs at start, on kick when the serving build changes, and on its timer; runs never overlap", async () => {
    const t = await setup({ "usda-angle": ["111"] });
    const d = t.make();
    let serving: ServingBuild = t.b0;
    let running = 0;
    let overlapped = false;
    const runOnce = d.runOnce.bind(d);
    d.runOnce = async (b) => {
      running++;
      if (running > 1) overlapped = true;
      try {
        return await runOnce(b);
      } finally {
        running--;
      }
    };
    const loop = startAlertLoop(d, async () => serving, 60_000);
    try {
      await expect.poll(async () => (await d.status()).lastDispatchStatus, { timeout: 30_000 }).toBe("baseline");
      serving = t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) });
      loop.kick();
      loop.kick();
      await expect.poll(() => sends().length, { timeout: 30_000 }).toBe(1);
      expect(String(sends()[0].params.chat_id)).toBe("111");
    } finally {
      await loop.stop();
    }
    expect(overlapped).toBe(false);
    const short = startAlertLoop(d, async () => serving, 20);
    const before = (await d.status()).lastDispatchAt;
    t.clock.sec += 5;
    await expect
      .poll(async () => (await d.status()).lastDispatchAt, { timeout: 30_000 })
      .toBe(must(before, "lastDispatchAt before the short loop") + 5);
    await short.stop();
    expect(sends()).toHaveLength(1);
  });
});

describe("dispatch status (health telegramSummary)", () => {
  it("counts pending deliveries and the overdue backlog, reports the last run and the safety source", async () => {
    const t = await setup({ "usda-angle": ["1", "2", "3"] });
    const d = t.make({ backlogGraceSec: 300 });
    const empty = await d.status();
    expect(empty).toEqual(noDispatchRunYet("available", 0));
    await d.runOnce(t.b0);
    const start = t.clock.sec;
    expect(await d.status()).toMatchObject({
      lastDispatchAt: start,
      lastDispatchStatus: "baseline",
      safetyAlertSourceState: "ok",
      safetyAlertSourceAgeSeconds: T1 + 600 - T0,
      safetyAlertsSuppressed: false,
      safetyAlertSourceGeneration: "ballast-safety-score-v1",
    });

    await d.enqueue(t.pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) }));
    expect(await d.status()).toMatchObject({
      pendingDeliveries: 3,
      pendingDeliveryBacklog: 0,
      safetyAlertSourceAgeSeconds: 600,
    });
    expect(await d.status(start + 301)).toMatchObject({ pendingDeliveries: 3, pendingDeliveryBacklog: 3 });
    // Age carried forward: past 48 h without a new build the source reads stale (suppressed).
    expect(await d.status(start + 48 * 3600)).toMatchObject({
      safetyAlertSourceState: "stale",
      safetyAlertSourceAgeSeconds: 600 + 48 * 3600,
      safetyAlertsSuppressed: true,
    });
    bot.failNext("sendMessage", { ok: false, error_code: 500, description: "Internal Server Error" });
    t.clock.sec = start + 10;
    expect((await d.runOnce(null)).status).toBe("retrying");
    expect(await d.status(start + 10)).toMatchObject({
      pendingDeliveries: 1,
      pendingDeliveryBacklog: 0,
      lastDispatchAt: start + 10,
      lastDispatchStatus: "retrying",
    });

    // A build without the grades file: source missing, grade alerts suppressed.
    t.clock.sec = start + 100;
    await d.runOnce(t.pub.publish("b2", T1 + DAY, { depeg: [usda], freezes: [] }));
    expect(await d.status()).toMatchObject({
      safetyAlertSourceState: "missing",
      safetyAlertsSuppressed: true,
      safetyAlertSourceAgeSeconds: null,
      safetyAlertSourceGeneration: null,
    });
  });

  it("an unreachable state store gives pendingDeliveries null and lifecycle unknown, and a run records error without throwing", async () => {
    const broken = {
      query: async () => {
        throw new Error("connect ECONNREFUSED");
      },
      close: async () => undefined,
    };
    const d = new AlertDispatcher({
      sql: broken,
      read: async () => null,
      api: new Api(TOKEN, { apiRoot: bot.apiRoot }),
      followers: mapFollowers({}),
    });
    expect(await d.status(T1)).toMatchObject({
      pendingDeliveries: null,
      pendingDeliveryLifecycleStatus: "unknown",
      pendingDeliveryBacklog: 0,
    });
    expect(await d.runOnce(null)).toMatchObject({ status: "error", error: "connect ECONNREFUSED" });
  });
});

describe("alert dispatch on the embedded state store (PGlite)", () => {
  it("enqueues, claims and sends the same way", async () => {
    const sql = await openSqlClient({ pgliteDir: "memory://" });
    cleanups.push(() => sql.close());
    const pub = new MemoryPublished();
    const d = new AlertDispatcher({
      sql,
      read: pub.reader,
      api: new Api(TOKEN, { apiRoot: bot.apiRoot, timeoutSeconds: 5 }),
      followers: mapFollowers({ "usda-angle": ["7", "8"] }),
      nowMs: () => (T1 + 600) * 1000,
    });
    expect((await d.runOnce(pub.publish("b0", T0, { depeg: [], freezes: [], grades: grades(T0) }))).status).toBe(
      "baseline",
    );
    const b1 = pub.publish("b1", T1, { depeg: [usda], freezes: [], grades: grades(T1) });
    expect(await d.runOnce(b1)).toMatchObject({ status: "ok", enqueue: { deliveries: 2 }, deliver: { sent: 2 } });
    expect(must((await d.runOnce(b1)).enqueue, "the run's enqueue result").action).toBe("unchanged");
    expect(sends().map((c) => String(c.params.chat_id))).toEqual(["7", "8"]);
    expect(await d.status()).toMatchObject({
      pendingDeliveries: 0,
      lastDispatchStatus: "ok",
      safetyAlertSourceState: "ok",
    });
  });
});
