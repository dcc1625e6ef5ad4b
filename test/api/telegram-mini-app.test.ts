import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyInitData } from "../../api/lib/telegram/init-data.ts";
import { botFixture, initDataFor, SITE_SECRET, signInitData, TEST_BOT_TOKEN } from "../helpers/telegram.ts";

let f: Awaited<ReturnType<typeof botFixture>>;
beforeAll(async () => {
  f = await botFixture("ballast_tg_miniapp");
  await f.service.store.ensureSchema();
});
afterAll(async () => {
  await f?.close();
});

const SESSION = "/api/telegram-mini-app/session";
const MUTATE = "/api/telegram-mini-app/mutate";
const userFollows = async (userId: number) =>
  (
    await f.sql.query<{ kind: string; target: string }>(
      "select kind, target from telegram_follows where chat_id = $1::bigint order by kind, target",
      [String(userId)],
    )
  ).rows;
const rowCount = async (table: string) =>
  Number((await f.sql.query<{ c: string }>(`select count(*) as c from ${table}`)).rows[0].c);
const counter = async (name: string) =>
  Number(
    (await f.sql.query<{ value: string }>("select value from telegram_counters where name = $1", [name])).rows[0]
      ?.value ?? 0,
  );
/** Every table a valid call may write besides the counters. */
const stateTables = [
  "telegram_chats",
  "telegram_follows",
  "telegram_chat_events",
  "telegram_mini_app_launches",
  "telegram_mini_app_requests",
];
const stateCounts = async () =>
  Object.fromEntries(await Promise.all(stateTables.map(async (t) => [t, await rowCount(t)])));

describe("init data HMAC (Telegram's documented algorithm)", () => {
  // Vector computed with openssl, independently of both this code and the library:
  //   secret=$(printf %s "$TOKEN" | openssl dgst -sha256 -hmac WebAppData -binary | xxd -p -c 256)
  //   printf 'auth_date=1764072000\nquery_id=AAQvector1\nsignature=c2ln…\nuser={"id":424242,...}' | openssl dgst -sha256 -mac HMAC -macopt hexkey:$secret
  // (`signature` is Telegram's Ed25519 field for third parties: signed over like any other field, not checked here.)
  const fields = {
    auth_date: "1764072000",
    query_id: "AAQvector1",
    signature: "c2lnbmF0dXJlLW5vdC1jaGVja2Vk",
    user: JSON.stringify({ id: 424242, first_name: "Alice", language_code: "en" }),
  };
  const EXPECTED = "9330822225d0baa0d86ab2e5a329512b3bafcf5fb53730ca85132881b60060b0";

  it("the test signer reproduces the known vector, and the service accepts it", () => {
    const signed = signInitData(fields);
    expect(new URLSearchParams(signed).get("hash")).toBe(EXPECTED);
    expect(verifyInitData(signed, TEST_BOT_TOKEN, 1764072000 + 10, 86400)).toEqual({
      userId: "424242",
      authDate: 1764072000,
      hash: EXPECTED,
    });
  });

  it("refuses a tampered hash, a tampered field, another bot's token, a missing hash; expired and future auth_date", () => {
    const signed = signInitData(fields);
    const now = 1764072000 + 10;
    const flip = signed.replace(/hash=([0-9a-f])/, (_m, c: string) => `hash=${c === "0" ? "1" : "0"}`);
    expect(() => verifyInitData(flip, TEST_BOT_TOKEN, now, 86400)).toThrow(/signature mismatch/);
    expect(() => verifyInitData(signed.replace("424242", "424243"), TEST_BOT_TOKEN, now, 86400)).toThrow(
      /signature mismatch/,
    );
    expect(() => verifyInitData(signed, "7000000002:other-token", now, 86400)).toThrow(/signature mismatch/);
    expect(() => verifyInitData(signed.replace(/&hash=[0-9a-f]+/, ""), TEST_BOT_TOKEN, now, 86400)).toThrow(
      /hash missing/,
    );
    expect(() => verifyInitData(signed, TEST_BOT_TOKEN, 1764072000 + 86401, 86400)).toThrow(/expired/);
    expect(() => verifyInitData(signed, TEST_BOT_TOKEN, 1764072000 - 3600, 86400)).toThrow(/future/);
    const noUser = signInitData({ auth_date: "1764072000", query_id: "AAQx", signature: "c2ln" });
    expect(() => verifyInitData(noUser, TEST_BOT_TOKEN, now, 86400)).toThrow(/no user payload/);
  });
});

describe("POST /api/telegram-mini-app/session", () => {
  it("valid init data: 200 no-store with the user's follows; the launch is recorded", async () => {
    const before = await rowCount("telegram_mini_app_launches");
    const res = await f.post(SESSION, { initData: initDataFor(501, f.now() - 60) });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toMatchObject({
      chatId: "501",
      active: false,
      inactiveReason: null,
      coins: [],
      presets: [],
      mutateUntil: f.now() - 60 + 3600,
    });
    expect(body.availablePresets.map((p: { name: string }) => p.name)).toEqual(["majors", "all"]);
    expect(await rowCount("telegram_mini_app_launches")).toBe(before + 1);
  });

  it("tampered hash, expired auth_date and no user payload: 401 naming why, nothing but the denied counter written", async () => {
    const before = await stateCounts();
    const denied = await counter("mini_app_denied");
    const good = initDataFor(502, f.now() - 60);
    const tampered = await f.post(SESSION, {
      initData: good.replace(/hash=([0-9a-f])/, (_m, c: string) => `hash=${c === "a" ? "b" : "a"}`),
    });
    expect([tampered.status, await tampered.json()]).toEqual([
      401,
      { error: "Invalid init data: signature mismatch", reason: "init_data_invalid" },
    ]);
    expect(tampered.headers.get("cache-control")).toBe("no-store");
    const expired = await f.post(SESSION, { initData: initDataFor(502, f.now() - 86400 - 1) });
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({
      reason: "init_data_expired",
      error: expect.stringMatching(/expired/),
    });
    const noUser = await f.post(SESSION, {
      initData: signInitData({ auth_date: String(f.now()), query_id: "AAQnouser", signature: "c2ln" }),
    });
    expect(noUser.status).toBe(401);
    expect(await stateCounts()).toEqual(before);
    expect(await counter("mini_app_denied")).toBe(denied + 3);
  });

  it("refused on the website-internal lane (403) before anything else, even with valid init data", async () => {
    const before = await stateCounts();
    const res = await f.post(
      SESSION,
      { initData: initDataFor(503, f.now()) },
      { "X-Ballast-Site-Proxy-Secret": SITE_SECRET },
    );
    expect(res.status).toBe(403);
    expect((await res.json()).error).toMatch(/website-internal lane/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await stateCounts()).toEqual(before);
  });

  it("bad bodies: 400 naming the problem, 413 past 16 KiB; nothing written", async () => {
    const before = await stateCounts();
    const cases: [unknown, RegExp][] = [
      ["{nope", /Invalid JSON body/],
      [{}, /initData/],
      [{ initData: 5 }, /initData/],
      [{ initData: "x", extra: 1 }, /unknown field extra/],
      [[], /Invalid body/],
    ];
    for (const [body, msg] of cases) {
      const res = await f.post(SESSION, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error).toMatch(msg);
    }
    expect((await f.post(SESSION, { initData: "x".repeat(17 * 1024) })).status).toBe(413);
    expect(await stateCounts()).toEqual(before);
  });
});

describe("POST /api/telegram-mini-app/mutate", () => {
  const user = 601;
  let initData: string;
  beforeAll(() => {
    initData = initDataFor(user, f.now() - 30);
  });

  it("follow a coin: 200 with the new state; the chat is opted in; the same requestId again is a replay claim (409), nothing changes", async () => {
    await f.post(SESSION, { initData });
    const res = await f.post(MUTATE, { initData, requestId: "req-0001-aaaa", action: "follow", coin: "usdt-tether" });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toMatchObject({
      chatId: String(user),
      active: true,
      coins: [{ id: "usdt-tether", symbol: "USDT" }],
      action: "follow",
      target: { coin: "usdt-tether" },
      changed: true,
    });
    expect(await userFollows(user)).toEqual([{ kind: "coin", target: "usdt-tether" }]);
    expect((await f.service.followers.followersOf(["usdt-tether"])).get("usdt-tether")).toContain(String(user));

    const replays = await counter("mini_app_replay_claims");
    const replay = await f.post(MUTATE, {
      initData,
      requestId: "req-0001-aaaa",
      action: "unfollow",
      coin: "usdt-tether",
    });
    expect([replay.status, (await replay.json()).reason]).toEqual([409, "init_data_replayed"]);
    expect(await userFollows(user)).toEqual([{ kind: "coin", target: "usdt-tether" }]);
    expect(await counter("mini_app_replay_claims")).toBe(replays + 1);
  });

  it("a new requestId with the same launch works: preset follow, then unfollow; open → first mutation recorded once", async () => {
    const p = await f.post(MUTATE, { initData, requestId: "req-0002-bbbb", action: "follow", preset: "MAJORS" });
    expect(await p.json()).toMatchObject({ presets: ["majors"], target: { preset: "majors" }, changed: true });
    const u = await f.post(MUTATE, { initData, requestId: "req-0003-cccc", action: "unfollow", coin: "usdt-tether" });
    expect(await u.json()).toMatchObject({ coins: [], presets: ["majors"], changed: true });
    expect(await userFollows(user)).toEqual([{ kind: "preset", target: "majors" }]);
    const { rows } = await f.sql.query<{ opened_at: string; first_mutation_at: string | null }>(
      "select opened_at, first_mutation_at from telegram_mini_app_launches where user_id = $1",
      [user],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].first_mutation_at).not.toBeNull();
  });

  it("mutation init data older than 1 h is expired (401) though a session would accept it; invalid init data writes nothing", async () => {
    const before = await stateCounts();
    const old = initDataFor(602, f.now() - 3601);
    expect((await f.post(SESSION, { initData: old })).status).toBe(200);
    const after = await stateCounts();
    const res = await f.post(MUTATE, {
      initData: old,
      requestId: "req-0004-dddd",
      action: "follow",
      coin: "usdt-tether",
    });
    expect([res.status, (await res.json()).reason]).toEqual([401, "init_data_expired"]);
    const forged = signInitData(
      { auth_date: String(f.now()), signature: "c2ln", user: JSON.stringify({ id: 603, first_name: "M" }) },
      "7000000009:not-our-token",
    );
    expect(
      (await f.post(MUTATE, { initData: forged, requestId: "req-0005-eeee", action: "follow", coin: "usdt-tether" }))
        .status,
    ).toBe(401);
    expect(await stateCounts()).toEqual(after);
    expect(after.telegram_mini_app_launches).toBe(before.telegram_mini_app_launches + 1);
    expect(await userFollows(603)).toEqual([]);
  });

  it("website-internal lane 403; bad bodies 400; unknown coin or preset 404; nothing written", async () => {
    const fresh = initDataFor(604, f.now());
    const before = await stateCounts();
    const site = await f.post(
      MUTATE,
      { initData: fresh, requestId: "req-0006-ffff", action: "follow", coin: "usdt-tether" },
      { "X-Ballast-Site-Proxy-Secret": SITE_SECRET },
    );
    expect(site.status).toBe(403);
    const bad: [unknown, RegExp][] = [
      [{ initData: fresh, requestId: "req-0007-gggg", action: "follow" }, /exactly one of coin or preset/],
      [
        { initData: fresh, requestId: "req-0007-gggg", action: "follow", coin: "usdt-tether", preset: "majors" },
        /exactly one of coin or preset/,
      ],
      [{ initData: fresh, requestId: "short", action: "follow", coin: "usdt-tether" }, /requestId/],
      [{ initData: fresh, requestId: "req-0007-gggg", action: "toggle", coin: "usdt-tether" }, /action/],
    ];
    for (const [body, msg] of bad) {
      const res = await f.post(MUTATE, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error).toMatch(msg);
    }
    const unknownCoin = await f.post(MUTATE, {
      initData: fresh,
      requestId: "req-0008-hhhh",
      action: "follow",
      coin: "nosuch-coin",
    });
    expect([unknownCoin.status, (await unknownCoin.json()).error]).toEqual([404, "Unknown stablecoin id: nosuch-coin"]);
    const unknownPreset = await f.post(MUTATE, {
      initData: fresh,
      requestId: "req-0009-iiii",
      action: "follow",
      preset: "stables",
    });
    expect(unknownPreset.status).toBe(404);
    expect(await stateCounts()).toEqual(before);
  });

  it("a chat that blocked the bot stays inactive when the mini-app follows (the follow is kept)", async () => {
    await f.webhook(f.message(605, "/follow USDC"));
    await f.webhook(f.memberUpdate(605, "member", "kicked"));
    const res = await f.post(MUTATE, {
      initData: initDataFor(605, f.now()),
      requestId: "req-0010-jjjj",
      action: "follow",
      coin: "dai-sky",
    });
    expect(await res.json()).toMatchObject({ active: false, inactiveReason: "blocked", changed: true });
  });
});
