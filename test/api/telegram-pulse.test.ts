import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { createTelegramService } from "../../api/lib/telegram/index.ts";
import { TelegramPulseSchema } from "../../api/lib/telegram/pulse.ts";
import type { DispatchStatus } from "../../api/lib/telegram/service.ts";
import {
  appWithoutBuild,
  botFixture,
  coinListStore,
  TEST_BOT_ME,
  initDataFor,
  SITE_SECRET,
  TEST_BOT_TOKEN,
} from "../helpers/telegram.ts";

let f: Awaited<ReturnType<typeof botFixture>>;
beforeAll(async () => {
  f = await botFixture("ballast_tg_pulse");
});
afterAll(async () => {
  await f?.close();
});

const pulse = async () => {
  const res = await f.app.request("/api/telegram-pulse", { headers: { "X-API-Key": f.token } });
  expect(res.status).toBe(200);
  return { res, body: await res.json() };
};
const adoption = (body: string | undefined, secret: string | null = SITE_SECRET) =>
  f.app.request("/api/telegram-adoption", {
    method: "POST",
    headers: {
      ...(secret === null ? {} : { "X-Ballast-Site-Proxy-Secret": secret }),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body,
  });
const startChats = async (ids: number[]) => {
  for (const id of ids) await f.webhook(f.message(id, "/start"));
};

/** Every field of spec 2.16, in its order. */
const SPEC_FIELDS = [
  "activeWatchers",
  "coinSubscriptions",
  "explicitCoinSubscriptions",
  "presetImpliedCoinSubscriptions",
  "activePresetFollowers",
  "newWatchersToday",
  "churnedWatchersToday",
  "reactivatedWatchersToday",
  "historySource",
  "pendingDeliveries",
  "miniAppSessionsToday",
  "miniAppMutationsToday",
  "miniAppDeniedToday",
  "miniAppReplayClaimsToday",
  "miniAppOpenToFirstMutationP50Sec",
  "currentSnapshotAt",
  "lifecycleHistoryUpdatedAt",
  "lifecycleHistoryEverySeconds",
  "quality",
  "privacy",
  "updatedAt",
  "updatedEverySeconds",
  "topCoins",
  "watcherHistory",
];

describe("GET /api/telegram-pulse", () => {
  it("needs a key; empty store: every spec 2.16 field, zeros shown, live-fallback history, custom cache profile", async () => {
    expect((await f.app.request("/api/telegram-pulse")).status).toBe(401);
    const { res, body } = await pulse();
    expect(res.headers.get("cache-control")).toBe("public, s-maxage=300, max-age=300");
    expect(Object.keys(body).sort()).toEqual([...SPEC_FIELDS].sort());
    expect(() => TelegramPulseSchema.parse(body)).not.toThrow();
    expect(body).toMatchObject({
      activeWatchers: 0,
      coinSubscriptions: 0,
      explicitCoinSubscriptions: 0,
      presetImpliedCoinSubscriptions: 0,
      activePresetFollowers: 0,
      newWatchersToday: 0,
      churnedWatchersToday: 0,
      reactivatedWatchersToday: 0,
      historySource: "live-fallback",
      pendingDeliveries: null,
      miniAppSessionsToday: 0,
      miniAppMutationsToday: 0,
      miniAppDeniedToday: 0,
      miniAppReplayClaimsToday: 0,
      miniAppOpenToFirstMutationP50Sec: null,
      currentSnapshotAt: null,
      lifecycleHistoryUpdatedAt: null,
      lifecycleHistoryEverySeconds: 86400,
      quality: { status: "partial", unavailableFields: ["pendingDeliveries"] },
      privacy: { exactActiveWatchers: true, lowCardinalityThreshold: 5, suppressedFields: [] },
      updatedAt: f.now(),
      updatedEverySeconds: 300,
      topCoins: [],
      watcherHistory: [
        {
          date: "2026-11-25",
          timestamp: Date.parse("2026-11-25T00:00:00Z") / 1000,
          newWatchers: 0,
          activeWatchers: 0,
          churnedWatchers: 0,
          reactivatedWatchers: 0,
        },
      ],
    });
  });

  it("low-cardinality suppression: 3 watchers → null and listed; 0 shown; then 5 → shown", async () => {
    await startChats([701, 702, 703]);
    let { body } = await pulse();
    expect(body.activeWatchers).toBeNull();
    expect(body.newWatchersToday).toBeNull();
    expect(body.churnedWatchersToday).toBe(0);
    expect(body.privacy.exactActiveWatchers).toBe(false);
    expect(body.privacy.suppressedFields).toEqual(
      expect.arrayContaining([
        "activeWatchers",
        "newWatchersToday",
        "watcherHistory[2026-11-25].newWatchers",
        "watcherHistory[2026-11-25].activeWatchers",
      ]),
    );
    expect(body.privacy.suppressedFields).not.toContain("churnedWatchersToday");
    expect(body.watcherHistory.at(-1)).toMatchObject({ newWatchers: null, activeWatchers: null, churnedWatchers: 0 });

    await startChats([704, 705]);
    ({ body } = await pulse());
    expect(body.activeWatchers).toBe(5);
    expect(body.newWatchersToday).toBe(5);
    expect(body.privacy).toEqual({ exactActiveWatchers: true, lowCardinalityThreshold: 5, suppressedFields: [] });
  });

  it("subscriptions: explicit vs preset-implied pairs, preset followers suppressed at 3, top coins by followers (symbols)", async () => {
    for (const id of [701, 702, 703]) await f.webhook(f.message(id, "/follow majors"));
    await f.webhook(f.message(704, "/follow USDT EURC"));
    await f.webhook(f.message(703, "/follow usdt-tether")); // explicit and implied: counted once, as explicit
    const { body } = await pulse();
    // majors within the test list: usdt-tether, usdc-circle, dai-sky, usds-sky → 4 pairs per preset follower
    expect(body.explicitCoinSubscriptions).toBe(3);
    expect(body.presetImpliedCoinSubscriptions).toBe(3 * 4 - 1);
    expect(body.coinSubscriptions).toBe(3 + 11);
    expect(body.activePresetFollowers).toBeNull();
    expect(body.privacy.suppressedFields).toContain("activePresetFollowers");
    expect(body.topCoins).toEqual(["USDT", "DAI", "USDC", "USDS", "EURC"]);
  });

  it("mini-app counts: denied never suppressed; sessions, mutations and the open → first mutation median suppressed below 5", async () => {
    for (let i = 0; i < 3; i++)
      await f.post("/api/telegram-mini-app/session", { initData: initDataFor(900, f.now() - 2 * 86400) }); // expired: denied
    let { body } = await pulse();
    expect(body.miniAppDeniedToday).toBe(3);
    expect(body.privacy.suppressedFields).not.toContain("miniAppDeniedToday");

    const start = f.clock.ms;
    for (const [i, user] of [801, 802, 803, 804, 805].entries()) {
      const initData = initDataFor(user, f.now());
      expect((await f.post("/api/telegram-mini-app/session", { initData })).status).toBe(200);
      f.clock.ms += (i + 1) * 10_000; // 10, 20, 30, 40, 50 s until the first mutation
      expect(
        (
          await f.post("/api/telegram-mini-app/mutate", {
            initData,
            requestId: `pulse-req-${user}`,
            action: "follow",
            coin: "usdc-circle",
          })
        ).status,
      ).toBe(200);
      if (i === 0) {
        ({ body } = await pulse());
        expect(body.miniAppSessionsToday).toBeNull();
        expect(body.miniAppMutationsToday).toBeNull();
        expect(body.miniAppOpenToFirstMutationP50Sec).toBeNull();
        expect(body.privacy.suppressedFields).toEqual(
          expect.arrayContaining(["miniAppSessionsToday", "miniAppMutationsToday", "miniAppOpenToFirstMutationP50Sec"]),
        );
      }
    }
    const replay = await f.post("/api/telegram-mini-app/mutate", {
      initData: initDataFor(805, f.now()),
      requestId: "pulse-req-805",
      action: "follow",
      coin: "usdc-circle",
    });
    expect(replay.status).toBe(200); // another launch (new init data): not a replay
    ({ body } = await pulse());
    expect(body.miniAppSessionsToday).toBe(5);
    expect(body.miniAppMutationsToday).toBe(6);
    expect(body.miniAppOpenToFirstMutationP50Sec).toBe(30);
    expect(body.miniAppReplayClaimsToday).toBe(0);
    expect(f.clock.ms - start).toBe(150_000);
  });

  it("the adoption POST (site lane) records today's snapshot: historySource switches to snapshot", async () => {
    expect((await adoption("{}", null)).status).toBe(401);
    expect((await adoption("{}", "wrong-site-secret-000")).status).toBe(401);
    const bad = await adoption('{"activeWatchers": 99}');
    expect([bad.status, (await bad.json()).error]).toEqual([400, "Invalid body: unknown field activeWatchers"]);
    expect((await pulse()).body.historySource).toBe("live-fallback");

    const res = await adoption(undefined);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const snap = await res.json();
    expect(snap).toMatchObject({
      day: "2026-11-25",
      snapshotAt: f.now(),
      activeWatchers: 10,
      newWatchers: 10,
      churnedWatchers: 0,
      reactivatedWatchers: 0,
    });

    const { body } = await pulse();
    expect(body.historySource).toBe("snapshot");
    expect(body.currentSnapshotAt).toBe(f.now());
    expect(body.lifecycleHistoryUpdatedAt).toBe(f.now());
    expect(body.watcherHistory).toEqual([
      {
        date: "2026-11-25",
        timestamp: Date.parse("2026-11-25T00:00:00Z") / 1000,
        snapshotAt: f.now(),
        newWatchers: 10,
        activeWatchers: 10,
        churnedWatchers: 0,
        reactivatedWatchers: 0,
      },
    ]);
  });

  it("the next UTC day falls back to live numbers until its snapshot; yesterday's snapshot stays in the history", async () => {
    const snapAt = f.now();
    f.clock.ms = Date.parse("2026-11-26T08:00:00Z");
    await f.webhook(f.message(705, "/stop"));
    const { body } = await pulse();
    expect(body.historySource).toBe("live-fallback");
    expect(body.currentSnapshotAt).toBeNull();
    expect(body.lifecycleHistoryUpdatedAt).toBe(snapAt);
    expect(body.newWatchersToday).toBe(0);
    expect(body.churnedWatchersToday).toBeNull(); // 1
    expect(
      body.watcherHistory.map((r: { date: string; snapshotAt?: number }) => [r.date, r.snapshotAt ?? null]),
    ).toEqual([
      ["2026-11-25", snapAt],
      ["2026-11-26", null],
    ]);
    expect(body.miniAppDeniedToday).toBe(0);
  });

  it("pendingDeliveries and health's summary come from the dispatcher when one is wired", async () => {
    const status: DispatchStatus = {
      pendingDeliveries: 7,
      pendingDeliveryLifecycleStatus: "available",
      pendingDeliveryBacklog: 2,
      lastDispatchAt: 1_764_000_000,
      lastDispatchStatus: "ok",
      safetyAlertSourceState: "ok",
      safetyAlertSourceAgeSeconds: 120,
      safetyAlertsSuppressed: false,
      safetyAlertSourceGeneration: "g1",
    };
    const service = createTelegramService({
      sql: f.sql,
      token: TEST_BOT_TOKEN,
      apiRoot: f.botApi.apiRoot,
      botInfo: TEST_BOT_ME,
      dispatch: { status: async () => status },
    });
    const p = await service.pulse({ build: null, wallNow: f.now() });
    expect(p.pendingDeliveries).toBe(7);
    // no coin list (no build): subscription totals that need it are unavailable, not zero
    expect(p.quality).toEqual({
      status: "partial",
      unavailableFields: ["coinSubscriptions", "presetImpliedCoinSubscriptions"],
    });
    expect([p.coinSubscriptions, p.presetImpliedCoinSubscriptions]).toEqual([null, null]);
    const chats = Number((await f.sql.query<{ c: string }>("select count(*) as c from telegram_chats")).rows[0].c);
    expect(await service.summary(f.now())).toEqual({ totalChats: chats, ...status });
  });

  it("header and body on one clock: on a replay build `updatedAt` is the replay clock's X-Data-Updated-At", async () => {
    const app = createApp({
      store: coinListStore(() => f.clock.ms),
      keys: f.keys,
      limiter: new KeyRateLimiter(),
      corsOrigins: [],
      clockMode: "replay",
      nowMs: () => f.clock.ms,
      services: { telegram: f.service },
    });
    const res = await app.request("/api/telegram-pulse", { headers: { "X-API-Key": f.token } });
    expect(res.status).toBe(200);
    const body = await res.json();
    const header = Number(res.headers.get("x-data-updated-at"));
    // the served build is as of 2023-11-14 (test/helpers/telegram.ts); the wall clock is 2026-11-25
    expect(header).toBeLessThan(Date.parse("2024-01-01T00:00:00Z") / 1000);
    expect(body.updatedAt).toBe(header);
    expect(res.headers.get("x-data-age")).toBe("0");
  });

  it("503 `Data not yet available: telegram-pulse` without a bot", async () => {
    const app = appWithoutBuild(f.keys);
    const res = await app.request("/api/telegram-pulse", { headers: { "X-API-Key": f.token } });
    expect([res.status, await res.json()]).toEqual([503, { error: "Data not yet available: telegram-pulse" }]);
  });
});

describe("GET /api/telegram-pulse with a single watcher", () => {
  let one: Awaited<ReturnType<typeof botFixture>>;
  beforeAll(async () => {
    one = await botFixture("ballast_tg_pulse_one");
  });
  afterAll(async () => {
    await one?.close();
  });

  it("what one watcher follows is suppressed like the counts: subscription counts and topCoins null and listed", async () => {
    await one.webhook(one.message(601, "/start"));
    await one.webhook(one.message(601, "/follow majors"));
    await one.webhook(one.message(601, "/follow EURC"));
    const res = await one.app.request("/api/telegram-pulse", { headers: { "X-API-Key": one.token } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(() => TelegramPulseSchema.parse(body)).not.toThrow();
    expect(body).toMatchObject({
      activeWatchers: null,
      coinSubscriptions: null,
      explicitCoinSubscriptions: null,
      presetImpliedCoinSubscriptions: null,
      topCoins: null,
    });
    expect(body.privacy.suppressedFields).toEqual(
      expect.arrayContaining([
        "activeWatchers",
        "coinSubscriptions",
        "explicitCoinSubscriptions",
        "presetImpliedCoinSubscriptions",
        "topCoins",
      ]),
    );
    // the store does hold the follows (1 explicit + 4 preset-implied pairs): the nulls are suppression, not absence
    const exact = await one.app.request("/api/telegram-adoption", {
      method: "POST",
      headers: { "X-Ballast-Site-Proxy-Secret": SITE_SECRET },
    });
    expect(await exact.json()).toMatchObject({ activeWatchers: 1, coinSubscriptions: 5 });
  });
});
