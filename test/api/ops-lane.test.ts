import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import { type JobCommand, type JobOutcome, JobRunner } from "../../api/lib/jobs.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { MaintenanceGate } from "../../api/lib/maintenance.ts";
import { OperatorAuth } from "../../api/lib/ops-access.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { createOpsApp } from "../../api/ops-app.ts";
import { must } from "../helpers/must.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { listCoin, publishFakeBuild, signJwt, startJwksServer, testOpsApp, type JwksServer } from "../helpers/ops.ts";

const AUD = "ops-api-aud";
const ISS = "https://ballast-team.cloudflareaccess.com";
const TOKEN_ID = "svc-token-id-0001";
const TOKEN_SECRET = "svc-token-secret-0123456789abcdef";
const OPS_ORIGIN = "https://ops.ballast.example";
const LEDGER = "/tmp/ballast-ops-test-ledger.duckdb";
/** A well-formed supply config key (`<coin>:<chain>:<contract>:<family>`). */
const USDC_SUPPLY = "usdc-circle:ethereum:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48:erc20-supply";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let sqlB: SqlClient;
let keys: KeyStore;
let jwks: JwksServer;
let dir: string;
let store: PublishedStore;

/** Jobs the fake executor was asked to run, and how it answers. */
let executed: JobCommand[] = [];
let answer: (cmd: JobCommand) => Promise<JobOutcome> = async () => ({ exitCode: 0, stdout: "[]", stderr: "" });

type Instance = { pub: Hono; ops: Hono; maintenance: MaintenanceGate; jobs: JobRunner };
let a: Instance;
let b: Instance;

/** One API process: public app and operator app sharing the maintenance switch and key-change hook. */
function instance(s: SqlClient, k: KeyStore): Instance {
  const maintenance = new MaintenanceGate(s);
  const pub = createApp({
    store,
    keys: k,
    limiter: new KeyRateLimiter(),
    corsOrigins: [],
    clockMode: "wall",
    maintenance,
  });
  const jobs = new JobRunner(s, {
    executor: (cmd) => {
      executed.push(cmd);
      return answer(cmd);
    },
  });
  const ops = testOpsApp({
    jwksUrl: jwks.url,
    access: {
      audience: AUD,
      issuer: ISS,
      serviceToken: { id: TOKEN_ID, secret: TOKEN_SECRET },
      allowedOrigins: [OPS_ORIGIN],
    },
    keys: k,
    store,
    maintenance,
    jobs,
    ledgerPath: LEDGER,
    dataDir: dir,
    jobWaitMs: 3000,
  });
  return { pub, ops, maintenance, jobs };
}

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  jwks = await startJwksServer();
  schema = await createTestSchema("ballast_ops");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  sqlB = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  dir = mkdtempSync(join(tmpdir(), "ballast-ops-"));
  publishFakeBuild(dir, "b1", [
    listCoin("aaa-unreviewed-1", "AAA", 1_000_000, true),
    listCoin("bbb-unreviewed-2", "BBB", 5_000_000, true),
    listCoin("usdt-tether", "USDT", 9e10, false),
  ]);
  store = new PublishedStore(fsReader(dir), 0);
  a = instance(sql, keys);
  const keysB = new KeyStore(sqlB, "pepper-for-tests-0123456789");
  b = instance(sqlB, keysB);
});
afterAll(async () => {
  await a?.jobs.close();
  await b?.jobs.close();
  await sql?.close();
  await sqlB?.close();
  await schema?.drop();
  await jwks?.close();
});
beforeEach(() => {
  executed = [];
  answer = async () => ({ exitCode: 0, stdout: "[]", stderr: "" });
});

const SVC = { "CF-Access-Client-Id": TOKEN_ID, "CF-Access-Client-Secret": TOKEN_SECRET };
const now = () => Math.floor(Date.now() / 1000);
const claims = (over: Record<string, unknown> = {}) => ({
  aud: [AUD],
  iss: ISS,
  sub: "u1",
  email: "ops@ballast.example",
  iat: now(),
  exp: now() + 600,
  ...over,
});

/** An operator request (service token, admin header on POST unless `admin: false`). */
function op(
  app: Hono,
  method: string,
  path: string,
  init: {
    headers?: Record<string, string>;
    body?: unknown;
    admin?: boolean;
    auth?: Record<string, string> | null;
  } = {},
) {
  const headers: Record<string, string> = {
    ...(init.auth === null ? {} : (init.auth ?? SVC)),
    ...((init.admin ?? method === "POST") ? { "X-Ballast-Admin": "1" } : {}),
    ...init.headers,
  };
  const body =
    init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  return app.request(path, { method, headers, body });
}
/** Authenticated on the public lane? An unknown keyed path answers 404 with a valid key, 401 without. */
const probe = async (app: Hono, token: string) =>
  (await app.request("/api/no-such-route", { headers: { "X-API-Key": token } })).status;

describe("operator authentication (spec 5.6, 7)", () => {
  const get = (headers: Record<string, string>) => op(a.ops, "GET", "/api/admin/maintenance", { auth: headers });

  it("a valid access JWT is admitted; every operator response is no-store", async () => {
    const r = await get({ "Cf-Access-Jwt-Assertion": signJwt(jwks.privateKey, claims(), { kid: jwks.kid }) });
    expect(r.status).toBe(200);
    expect(r.headers.get("Cache-Control")).toBe("no-store");
    expect(await r.json()).toMatchObject({ enabled: false });
  });

  it("expired, wrong audience, wrong issuer, bad signature, alg none, garbage: 401", async () => {
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const bad = [
      signJwt(jwks.privateKey, claims({ exp: now() - 3600 }), { kid: jwks.kid }),
      signJwt(jwks.privateKey, claims({ aud: ["someone-else"] }), { kid: jwks.kid }),
      signJwt(jwks.privateKey, claims({ iss: "https://evil.cloudflareaccess.com" }), { kid: jwks.kid }),
      signJwt(other, claims(), { kid: jwks.kid }),
      signJwt(jwks.privateKey, claims({ nbf: now() + 3600 }), { kid: jwks.kid }),
      signJwt(jwks.privateKey, claims(), { kid: jwks.kid, alg: "none" }),
      signJwt(jwks.privateKey, claims(), { kid: jwks.kid, alg: "HS256" }),
      "not.a.jwt",
    ];
    for (const t of bad) {
      const r = await get({ "Cf-Access-Jwt-Assertion": t });
      expect(r.status, t.slice(0, 40)).toBe(401);
      expect(r.headers.get("Cache-Control")).toBe("no-store");
    }
    // a bad JWT never falls back to a valid service token sent with it
    expect((await get({ "Cf-Access-Jwt-Assertion": bad[0], ...SVC })).status).toBe(401);
  });

  it("502 when the JWKS cannot be fetched (nothing cached)", async () => {
    jwks.down = true;
    try {
      const fresh = new OperatorAuth({ jwksUrl: jwks.url, audiences: [AUD], issuer: ISS });
      const app = createOpsApp({
        auth: fresh,
        keys,
        store,
        clockMode: "wall",
        maintenance: a.maintenance,
        jobs: a.jobs,
        ledgerPath: LEDGER,
        dataDir: dir,
      });
      const r = await op(app, "GET", "/api/admin/maintenance", {
        auth: { "Cf-Access-Jwt-Assertion": signJwt(jwks.privateKey, claims(), { kid: jwks.kid }) },
      });
      expect(r.status).toBe(502);
      expect((await r.json()).error).toMatch(/JWKS/);
      const unreachable = createOpsApp({
        auth: new OperatorAuth({ jwksUrl: "http://127.0.0.1:9/certs", audiences: [AUD], issuer: ISS }),
        keys,
        store,
        clockMode: "wall",
        maintenance: a.maintenance,
        jobs: a.jobs,
        ledgerPath: LEDGER,
        dataDir: dir,
      });
      expect(
        (
          await op(unreachable, "GET", "/api/admin/maintenance", {
            auth: { "Cf-Access-Jwt-Assertion": signJwt(jwks.privateKey, claims(), { kid: jwks.kid }) },
          })
        ).status,
      ).toBe(502);
    } finally {
      jwks.down = false;
    }
  });

  it("service token: the configured pair is admitted; a wrong secret or id, or no credentials, is 401", async () => {
    expect((await get(SVC)).status).toBe(200);
    expect((await get({ ...SVC, "CF-Access-Client-Secret": `${TOKEN_SECRET}x` })).status).toBe(401);
    expect((await get({ ...SVC, "CF-Access-Client-Id": "svc-token-id-0002" })).status).toBe(401);
    expect((await get({ "CF-Access-Client-Id": TOKEN_ID })).status).toBe(401);
    const none = await get({});
    expect(none.status).toBe(401);
    expect(none.headers.get("Cache-Control")).toBe("no-store");
    // unknown paths too: authentication first, then 404
    expect((await op(a.ops, "GET", "/api/nothing-here", { auth: null })).status).toBe(401);
    expect((await op(a.ops, "GET", "/api/nothing-here")).status).toBe(404);
  });

  it("mutations need X-Ballast-Admin: 1 (403) and, with an Origin, an allowlisted one (403)", async () => {
    const body = { enabled: false };
    expect((await op(a.ops, "POST", "/api/admin/maintenance", { body, admin: false })).status).toBe(403);
    expect(
      (await op(a.ops, "POST", "/api/admin/maintenance", { body, headers: { "X-Ballast-Admin": "true" } })).status,
    ).toBe(403);
    const foreign = await op(a.ops, "POST", "/api/admin/maintenance", {
      body,
      headers: { Origin: "https://evil.example" },
    });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error).toMatch(/Origin/);
    expect((await op(a.ops, "POST", "/api/admin/maintenance", { body, headers: { Origin: OPS_ORIGIN } })).status).toBe(
      200,
    );
    // a JWT operator mutates the same way
    const jwt = { "Cf-Access-Jwt-Assertion": signJwt(jwks.privateKey, claims(), { kid: jwks.kid }) };
    expect((await op(a.ops, "POST", "/api/admin/maintenance", { body, auth: jwt })).status).toBe(200);
    expect((await op(a.ops, "POST", "/api/admin/maintenance", { body, auth: jwt, admin: false })).status).toBe(403);
    // reads need no admin header
    expect((await op(a.ops, "GET", "/api/api-keys", { admin: false })).status).toBe(200);
  });

  it("the operator description lists every operator route; the public one none", async () => {
    const doc = await (await op(a.ops, "GET", "/openapi.json")).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/api-keys",
        "/api/api-keys/{id}/rotate",
        "/api/discovery-candidates/{id}/dismiss",
        "/api/backfill-mint-burn",
      ]),
    );
    expect((await op(a.ops, "GET", "/openapi.json", { auth: null })).status).toBe(401);
  });
});

/** Spec 4.5, row by row (not read from the route table, so a missing declaration fails here). */
const SPEC_ROWS: [string, string][] = [
  ["GET", "/api/api-keys"],
  ["POST", "/api/api-keys"],
  ["POST", "/api/api-keys/:id/update"],
  ["POST", "/api/api-keys/:id/deactivate"],
  ["POST", "/api/api-keys/:id/rotate"],
  ["POST", "/api/backfill-depegs"],
  ["POST", "/api/backfill-supply-history"],
  ["POST", "/api/backfill-stability-index"],
  ["POST", "/api/backfill-cg-prices"],
  ["POST", "/api/backfill-mint-burn-prices"],
  ["GET", "/api/backfill-dews"],
  ["POST", "/api/backfill-mint-burn"],
  ["POST", "/api/reclassify-atomic-roundtrips"],
  ["GET", "/api/audit-depeg-history?dry-run=true"],
  ["POST", "/api/audit-depeg-history"],
  ["POST", "/api/trigger-digest"],
  ["POST", "/api/reset-blacklist-sync"],
  ["GET", "/api/debug-sync-state"],
  ["POST", "/api/remediate-blacklist-amount-gaps"],
  ["POST", "/api/backfill-blacklist-current-balances"],
  ["GET", "/api/discovery-candidates"],
  ["POST", "/api/discovery-candidates/:id/dismiss"],
];

describe("every spec 4.5 route", () => {
  it("answers on the operator lane and is 404 on the public one (with or without a key)", async () => {
    const { token, record } = await keys.create({ name: "routes" });
    expect(SPEC_ROWS).toHaveLength(22);
    for (const [method, template] of SPEC_ROWS) {
      const path = template.replace(":id/dismiss", "bbb-unreviewed-2/dismiss").replace(":id", record.id);
      const body = path.endsWith("/update")
        ? { name: "renamed" }
        : path === "/api/api-keys" && method === "POST"
          ? { name: "made by the route test" }
          : undefined;
      const r = await op(a.ops, method, path, { body });
      const payload = await r.json();
      expect([r.status, payload.error], `${method} ${path}`).not.toEqual([404, "Not found"]);
      expect(r.status, `${method} ${path}`).not.toBe(405);
      expect(r.headers.get("Cache-Control")).toBe("no-store");
      for (const key of [token, null]) {
        const pub = await a.pub.request(path, { method, headers: key ? { "X-API-Key": key } : {} });
        expect(pub.status, `public ${method} ${path}`).toBe(404);
      }
    }
  });

  it("jobs run the existing pipeline CLIs with the spec's parameters; routes without a job answer 503", async () => {
    answer = async (cmd) => ({
      exitCode: 0,
      stdout: cmd.args[0] === "reset-blacklist-sync" ? '{"ok":true,"evmReset":3,"tronReset":1}' : "[]",
      stderr: "",
    });
    const reset = await op(a.ops, "POST", "/api/reset-blacklist-sync");
    expect(reset.status).toBe(200);
    expect(await reset.json()).toEqual({ ok: true, evmReset: 3, tronReset: 1 });
    expect(executed.at(-1)).toEqual({
      script: "build/onchain-cli.ts",
      args: ["reset-blacklist-sync", "--ledger", LEDGER],
    });
    const sync = await op(a.ops, "GET", "/api/debug-sync-state");
    expect([sync.status, await sync.json()]).toEqual([200, []]);
    await op(a.ops, "POST", `/api/backfill-mint-burn?configKey=${USDC_SUPPLY}&fromBlock=100&toBlock=200`);
    expect(must(executed.at(-1), "the last job command").args).toEqual([
      "backfill-mint-burn",
      "--ledger",
      LEDGER,
      "--configKey",
      USDC_SUPPLY,
      "--fromBlock",
      "100",
      "--toBlock",
      "200",
      "--chunkSize",
      "50000",
      "--maxChunks",
      "24",
    ]);
    await op(a.ops, "POST", "/api/remediate-blacklist-amount-gaps?limit=7");
    expect(must(executed.at(-1), "the last job command").args).toEqual([
      "remediate-blacklist-amount-gaps",
      "--ledger",
      LEDGER,
      "--limit",
      "7",
      "--dryRun",
      "true",
      "--onlyMissingProvenance",
      "true",
      "--maxAttempts",
      "25",
    ]);
    const digest = await op(a.ops, "POST", "/api/trigger-digest");
    expect(digest.status).toBe(202);
    const d = await digest.json();
    expect(d).toEqual({ ok: true, accepted: true, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await expect
      .poll(async () => (await (await op(a.ops, "GET", `/api/admin/jobs/${d.requestId}`)).json()).status)
      .toBe("succeeded");
    expect(
      must(
        executed.find((c) => c.script === "build/cli.ts"),
        "the build/cli.ts job",
      ).args.slice(0, 2),
    ).toEqual(["build", "--as-of"]);

    // bounds of the spec: 400 naming the parameter, before any job runs
    const before = executed.length;
    for (const [path, name] of [
      ["/api/backfill-mint-burn?configKey=x&fromBlock=1&toBlock=2&chunkSize=50001", "chunkSize"],
      ["/api/backfill-mint-burn?configKey=x&fromBlock=5&toBlock=2", "toBlock"],
      ["/api/backfill-mint-burn?fromBlock=1&toBlock=2", "configKey"],
      ["/api/remediate-blacklist-amount-gaps?limit=201", "limit"],
      ["/api/backfill-blacklist-current-balances?limit=2001", "limit"],
      ["/api/backfill-blacklist-current-balances?dryRun=maybe", "dryRun"],
      ["/api/remediate-blacklist-amount-gaps?limit=1&limit=2", "limit"],
      ["/api/reset-blacklist-sync?force=true", "force"],
      ["/api/backfill-cg-prices?stablecoin=ZZZ", "stablecoin"],
      ["/api/backfill-depegs?batch=1", "batch"],
    ]) {
      const r = await op(a.ops, "POST", path);
      expect(r.status, path).toBe(400);
      expect((await r.json()).error, path).toContain(`Invalid parameter ${name}`);
    }
    expect(executed.length).toBe(before);

    // a job that fails its input check (CLI exit 2) is 400; a failed one 500
    answer = async () => ({
      exitCode: 2,
      stdout: '{"error":"unknown configKey: usdc-circle:ethereum:0x1:erc20-supply"}',
      stderr: "",
    });
    const rejected = await op(
      a.ops,
      "POST",
      "/api/backfill-mint-burn?configKey=usdc-circle:ethereum:0x1:erc20-supply&fromBlock=1&toBlock=2",
    );
    expect([rejected.status, (await rejected.json()).error]).toEqual([
      400,
      "unknown configKey: usdc-circle:ethereum:0x1:erc20-supply",
    ]);
    answer = async () => ({ exitCode: 1, stdout: '{"error":"rpc down"}', stderr: "" });
    expect((await op(a.ops, "POST", "/api/reset-blacklist-sync")).status).toBe(500);

    // the depeg backtest jobs run build/depeg-backtest-cli.ts as of the serving build, with the spec's parameters
    answer = async () => ({ exitCode: 0, stdout: '{"ok":true}', stderr: "" });
    const servingAsOf = String((await store.build())?.manifest.asOf);
    const dews = await op(a.ops, "GET", "/api/backfill-dews");
    expect([dews.status, await dews.json()]).toEqual([200, { ok: true }]);
    expect(executed.at(-1)).toEqual({
      script: "build/depeg-backtest-cli.ts",
      args: ["dews-validation", "--as-of", servingAsOf],
    });
    const preview = await op(a.ops, "GET", "/api/audit-depeg-history?dry-run=true&symbol=usdt&limit=7&min-supply=5e6");
    expect(preview.status).toBe(400); // min-supply is a plain number
    const audit = await op(
      a.ops,
      "GET",
      "/api/audit-depeg-history?dry-run=true&symbol=usdt&limit=7&min-supply=5000000",
    );
    expect(audit.status).toBe(200);
    expect(executed.at(-1)?.args).toEqual([
      "audit",
      "--as-of",
      servingAsOf,
      "--limit",
      "7",
      "--offset",
      "0",
      "--min-supply",
      "5000000",
      "--symbol",
      "usdt",
    ]);
    const jobsBefore = executed.length;
    const badSymbol = await op(a.ops, "GET", "/api/audit-depeg-history?dry-run=true&symbol=ZZZ");
    expect([badSymbol.status, (await badSymbol.json()).error]).toEqual([
      400,
      'Invalid parameter symbol: no listed stablecoin has symbol "ZZZ"',
    ]);
    // this serving build published no depeg history: event ids cannot be checked, so no job starts
    const noLedger = await op(a.ops, "POST", "/api/audit-depeg-history?delete=1,2");
    expect([noLedger.status, (await noLedger.json()).error]).toEqual([503, "Data not yet available: depeg-events"]);
    expect(executed.length).toBe(jobsBefore);
    expect((await op(a.ops, "POST", "/api/backfill-depegs?batch=-1")).status).toBe(400);
    // the ledger jobs start build/ledger-jobs-cli.ts (mint/burn prices in the build lock, up to the last completed day)
    answer = async () => ({ exitCode: 0, stdout: '{"done":true}', stderr: "" });
    const reclassify = await op(a.ops, "POST", "/api/reclassify-atomic-roundtrips");
    expect([reclassify.status, await reclassify.json()]).toEqual([200, { done: true }]);
    expect(executed.at(-1)).toEqual({
      script: "build/ledger-jobs-cli.ts",
      args: ["reclassify-atomic-roundtrips", "--ledger", LEDGER],
    });
    expect((await op(a.ops, "POST", "/api/backfill-mint-burn-prices")).status).toBe(200);
    const yesterday = new Date((Math.floor(now() / 86_400) - 1) * 86_400_000).toISOString().slice(0, 10);
    expect(executed.at(-1)).toEqual({
      script: "build/ledger-jobs-cli.ts",
      args: ["mint-burn-prices", "--to", yesterday, "--ledger", LEDGER],
    });
    expect((await op(a.ops, "POST", "/api/reclassify-atomic-roundtrips?batchSize=5")).status).toBe(400);
    // history backfills start build/backfill-history-cli.ts with the selected coins (reviewed only)
    answer = async () => ({ exitCode: 0, stdout: "{}", stderr: "" });
    expect((await op(a.ops, "POST", "/api/backfill-supply-history?stablecoin=usdt")).status).toBe(200);
    expect(executed.at(-1)?.script).toBe("build/backfill-history-cli.ts");
    expect(executed.at(-1)?.args.slice(0, 3)).toEqual(["supply-history", "--coins", "usdt-tether"]);
    const getRepair = await op(a.ops, "GET", "/api/audit-depeg-history");
    expect([getRepair.status, getRepair.headers.get("Allow")]).toEqual([405, "POST"]);
  });

  it("a job still running after the wait answers 202 with a requestId, and its state is readable on another instance", async () => {
    let release!: () => void;
    answer = () =>
      new Promise((r) => {
        release = () => r({ exitCode: 0, stdout: '{"ok":true,"evmReset":0,"tronReset":0}', stderr: "" });
      });
    const slow = createOpsApp({
      auth: new OperatorAuth({ serviceTokenId: TOKEN_ID, serviceTokenSecret: TOKEN_SECRET }),
      keys,
      store,
      clockMode: "wall",
      maintenance: a.maintenance,
      jobs: a.jobs,
      ledgerPath: LEDGER,
      dataDir: dir,
      jobWaitMs: 50,
    });
    const r = await op(slow, "POST", "/api/reset-blacklist-sync");
    expect(r.status).toBe(202);
    const { requestId } = await r.json();
    await expect
      .poll(async () => (await (await op(b.ops, "GET", `/api/admin/jobs/${requestId}`)).json()).status)
      .toBe("running");
    release();
    await expect
      .poll(async () => (await (await op(b.ops, "GET", `/api/admin/jobs/${requestId}`)).json()).result)
      .toEqual({ ok: true, evmReset: 0, tronReset: 0 });
  });
});

describe("api keys (spec 4.5)", () => {
  it("create returns the token once; list masks it; rotate stops the old token at once; deactivate; update", async () => {
    const created = await op(a.ops, "POST", "/api/api-keys", {
      body: { name: "partner", ownerEmail: "Partner@Example.com", rateLimitPerMinute: 300 },
    });
    expect(created.status).toBe(201);
    const { key, token } = await created.json();
    expect(token).toMatch(/^bl_live_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/);
    expect(key).toMatchObject({
      name: "partner",
      tier: "standard",
      rateLimitPerMinute: 300,
      isActive: true,
      ownerEmail: "partner@example.com",
    });

    const [, prefix, secret] = must(/^bl_live_([0-9a-f]{16})_(.{32})$/.exec(token), "a bl_live_ token");
    const listText = await (await op(a.ops, "GET", "/api/api-keys")).text();
    expect(listText).not.toContain(secret);
    const listed = JSON.parse(listText).keys.find((k: { id: string }) => k.id === key.id);
    expect(listed.maskedToken).toBe(`bl_live_${prefix}_…`);
    expect(listed).not.toHaveProperty("secretHash");

    // the key works on the public lane (and is now in its verification cache)
    expect(await probe(a.pub, token)).toBe(404);
    const rotated = await op(a.ops, "POST", `/api/api-keys/${key.id}/rotate`);
    expect(rotated.status).toBe(200);
    const { token: newToken } = await rotated.json();
    expect(newToken).not.toBe(token);
    expect(await probe(a.pub, token)).toBe(401);
    expect(await probe(a.pub, newToken)).toBe(404);

    const updated = await op(a.ops, "POST", `/api/api-keys/${key.id}/update`, {
      body: { rateLimitPerMinute: 5, name: "partner two" },
    });
    expect(updated.status).toBe(200);
    expect((await updated.json()).key).toMatchObject({ id: key.id, name: "partner two", rateLimitPerMinute: 5 });
    for (const body of [
      { rateLimitPerMinute: 0 },
      { rateLimitPerMinute: 10_001 },
      { tier: "self-serve" },
      {},
      { colour: "red" },
    ]) {
      expect((await op(a.ops, "POST", `/api/api-keys/${key.id}/update`, { body })).status, JSON.stringify(body)).toBe(
        400,
      );
    }
    expect((await op(a.ops, "POST", "/api/api-keys/no-such-key/update", { body: { name: "x" } })).status).toBe(404);

    const deactivated = await op(a.ops, "POST", `/api/api-keys/${key.id}/deactivate`);
    expect([deactivated.status, await deactivated.json()]).toEqual([200, { ok: true, id: key.id, isActive: false }]);
    expect(await probe(a.pub, newToken)).toBe(401);
    expect((await op(a.ops, "POST", `/api/api-keys/${key.id}/rotate`)).status).toBe(404);
    const reactivated = await op(a.ops, "POST", `/api/api-keys/${key.id}/update`, { body: { isActive: true } });
    expect((await reactivated.json()).key.isActive).toBe(true);
    expect(await probe(a.pub, newToken)).toBe(404);

    for (const body of [
      {},
      { name: "" },
      { name: "x", rateLimitPerMinute: 0 },
      { name: "x", tier: "self-serve" },
      { name: "x", ownerEmail: "nope" },
      "{not json",
    ]) {
      expect((await op(a.ops, "POST", "/api/api-keys", { body })).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("Idempotency-Key (spec 4.5, reference 6.1)", () => {
  const rows = async (key: string) => {
    const { rows: r } = await sql
      .query<{ n: number }>("select count(*)::int as n from admin_idempotency_keys where idempotency_key = $1", [key])
      .catch(() => ({ rows: [{ n: 0 }] }));
    return r[0].n;
  };

  it("two concurrent identical requests run the job once; replays return the first response", async () => {
    let release!: () => void;
    answer = () =>
      new Promise((r) => {
        release = () => r({ exitCode: 0, stdout: '{"ok":true,"evmReset":2,"tronReset":0}', stderr: "" });
      });
    const headers = { "Idempotency-Key": "  reset-2026-11-25  " };
    const first = op(a.ops, "POST", "/api/reset-blacklist-sync", { headers });
    const second = op(b.ops, "POST", "/api/reset-blacklist-sync", { headers });
    await expect.poll(() => executed.length).toBe(1);
    release();
    const [r1, r2] = await Promise.all([first, second]);
    expect(executed).toHaveLength(1);
    expect(await r1.json()).toEqual({ ok: true, evmReset: 2, tronReset: 0 });
    expect(await r2.json()).toEqual({ ok: true, evmReset: 2, tronReset: 0 });
    expect([r1.headers.get("X-Idempotent-Replay"), r2.headers.get("X-Idempotent-Replay")].sort()).toEqual([
      "false",
      "true",
    ]);
    expect(r1.headers.get("Idempotency-Key")).toBe("reset-2026-11-25");

    const later = await op(a.ops, "POST", "/api/reset-blacklist-sync", { headers });
    expect([later.status, later.headers.get("X-Idempotent-Replay"), later.headers.get("Idempotency-Key")]).toEqual([
      200,
      "true",
      "reset-2026-11-25",
    ]);
    expect(await later.json()).toEqual({ ok: true, evmReset: 2, tronReset: 0 });
    expect(executed).toHaveLength(1);
    // without the key the job runs again
    answer = async () => ({ exitCode: 0, stdout: '{"ok":true,"evmReset":0,"tronReset":0}', stderr: "" });
    await op(a.ops, "POST", "/api/reset-blacklist-sync");
    expect(executed).toHaveLength(2);
  });

  it("the same key with a different request is 409; parameter order does not matter", async () => {
    const headers = { "Idempotency-Key": "balances-1" };
    answer = async () => ({ exitCode: 0, stdout: '{"dryRun":true,"configs":[],"totals":{}}', stderr: "" });
    expect(
      (await op(a.ops, "POST", "/api/backfill-blacklist-current-balances?limit=5&dryRun=true", { headers })).status,
    ).toBe(200);
    const same = await op(a.ops, "POST", "/api/backfill-blacklist-current-balances?dryRun=true&limit=5", { headers });
    expect(same.headers.get("X-Idempotent-Replay")).toBe("true");
    const conflict = await op(a.ops, "POST", "/api/backfill-blacklist-current-balances?limit=6&dryRun=true", {
      headers,
    });
    expect(conflict.status).toBe(409);
    expect((await conflict.json()).error).toMatch(/different request/);
    expect(executed).toHaveLength(1);
  });

  it("authentication and mutation checks happen before any bookkeeping", async () => {
    const r = await op(a.ops, "POST", "/api/reset-blacklist-sync", {
      auth: { ...SVC, "CF-Access-Client-Secret": "wrong-wrong-wrong-wrong" },
      headers: { "Idempotency-Key": "unauth-1" },
    });
    expect(r.status).toBe(401);
    expect(await rows("unauth-1")).toBe(0);
    const noAdmin = await op(a.ops, "POST", "/api/reset-blacklist-sync", {
      admin: false,
      headers: { "Idempotency-Key": "unauth-2" },
    });
    expect(noAdmin.status).toBe(403);
    expect(await rows("unauth-2")).toBe(0);
    const badParam = await op(a.ops, "POST", "/api/backfill-depegs?batch=x", {
      headers: { "Idempotency-Key": "unauth-3" },
    });
    expect(badParam.status).toBe(400);
    expect(await rows("unauth-3")).toBe(0);
    expect(executed).toHaveLength(0);
  });

  it("a 5xx answer is not stored (a retry with the key runs again); overlong keys are 400; non-listed routes ignore the header; old rows are pruned", async () => {
    answer = async () => ({ exitCode: 1, stdout: '{"error":"upstream down"}', stderr: "" });
    const na = await op(a.ops, "POST", "/api/backfill-depegs", { headers: { "Idempotency-Key": "depegs-1" } });
    expect([na.status, na.headers.get("X-Idempotent-Replay")]).toEqual([500, "false"]);
    expect(await rows("depegs-1")).toBe(0);
    answer = async () => ({ exitCode: 0, stdout: "[]", stderr: "" });
    expect(
      (await op(a.ops, "POST", "/api/reset-blacklist-sync", { headers: { "Idempotency-Key": "k".repeat(129) } }))
        .status,
    ).toBe(400);
    const create = await op(a.ops, "POST", "/api/api-keys", {
      body: { name: "no idem" },
      headers: { "Idempotency-Key": "create-1" },
    });
    expect([create.status, create.headers.get("Idempotency-Key")]).toEqual([201, null]);
    expect(await rows("create-1")).toBe(0);

    await sql.query(
      "insert into admin_idempotency_keys (action, idempotency_key, request_hash, response_status, response_body, created_at, reservation_owner) values ('reset-blacklist-sync', 'ancient', 'h', 200, '{}', $1, 'o')",
      [now() - 8 * 86_400],
    );
    expect(await rows("ancient")).toBe(1);
    await op(a.ops, "POST", "/api/reset-blacklist-sync", { headers: { "Idempotency-Key": "prune-trigger" } });
    expect(await rows("ancient")).toBe(0);
  });
});

describe("discovery candidates (spec 4.5)", () => {
  const list = async (q = "") => {
    const r = await op(a.ops, "GET", `/api/discovery-candidates${q}`);
    return { status: r.status, body: await r.json() };
  };

  it("lists unreviewed coins; dismissal; 10× market-cap resurface rule; bounds", async () => {
    publishFakeBuild(dir, "d1", [
      listCoin("ccc-unreviewed-3", "CCC", 1_000_000, true),
      listCoin("ddd-unreviewed-4", "DDD", 5_000_000, true),
      listCoin("usdc-circle", "USDC", 7e10, false),
    ]);
    const first = await list();
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(2);
    expect(first.body.candidates.map((c: { id: string }) => c.id)).toEqual(["ddd-unreviewed-4", "ccc-unreviewed-3"]);
    expect(first.body.candidates[1]).toMatchObject({
      symbol: "CCC",
      marketCapUsd: 1_000_000,
      status: "active",
      dismissedAt: null,
    });

    expect(await (await op(a.ops, "POST", "/api/discovery-candidates/ccc-unreviewed-3/dismiss")).json()).toEqual({
      ok: true,
    });
    expect((await op(a.ops, "POST", "/api/discovery-candidates/ccc-unreviewed-3/dismiss")).status).toBe(404);
    expect((await op(a.ops, "POST", "/api/discovery-candidates/usdc-circle/dismiss")).status).toBe(404);
    expect((await op(a.ops, "POST", "/api/discovery-candidates/nope/dismiss")).status).toBe(404);
    expect((await list()).body.candidates.map((c: { id: string }) => c.id)).toEqual(["ddd-unreviewed-4"]);
    expect((await list("?status=dismissed")).body.candidates[0]).toMatchObject({
      id: "ccc-unreviewed-3",
      status: "dismissed",
      marketCapAtDismissalUsd: 1_000_000,
      resurfacesAtUsd: 10_000_000,
    });
    expect((await list("?status=all&limit=1&offset=1")).body).toMatchObject({
      total: 2,
      candidates: [{ id: "ccc-unreviewed-3" }],
    });

    publishFakeBuild(dir, "d2", [
      listCoin("ccc-unreviewed-3", "CCC", 9_999_999, true),
      listCoin("ddd-unreviewed-4", "DDD", 5_000_000, true),
    ]);
    expect((await list("?status=dismissed")).body.total).toBe(1);
    publishFakeBuild(dir, "d3", [
      listCoin("ccc-unreviewed-3", "CCC", 10_000_000, true),
      listCoin("ddd-unreviewed-4", "DDD", 5_000_000, true),
    ]);
    const back = (await list()).body.candidates.find((c: { id: string }) => c.id === "ccc-unreviewed-3");
    expect(back).toMatchObject({ status: "active", resurfacedAt: expect.any(Number) });
    // it stays active when the cap falls back, and can be dismissed again at the new value
    publishFakeBuild(dir, "d4", [listCoin("ccc-unreviewed-3", "CCC", 2_000_000, true)]);
    expect((await list()).body.candidates[0]).toMatchObject({ id: "ccc-unreviewed-3", status: "active" });
    expect((await op(a.ops, "POST", "/api/discovery-candidates/ccc-unreviewed-3/dismiss")).status).toBe(200);
    expect((await list("?status=dismissed")).body.candidates[0]).toMatchObject({
      marketCapAtDismissalUsd: 2_000_000,
      resurfacesAtUsd: 20_000_000,
    });

    for (const q of ["?limit=0", "?limit=201", "?limit=abc", "?offset=-1", "?status=gone", "?page=2"])
      expect((await list(q)).status, q).toBe(400);
  });
});

describe("backfill-stability-index (spec 4.5)", () => {
  it("dry run over the day range: the current UTC day is never included; a real run starts the snapshot backfill", async () => {
    publishFakeBuild(dir, "s1", [listCoin("usdt-tether", "USDT", 9e10, false)]);
    mkdirSync(join(dir, "snapshots"), { recursive: true });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    writeFileSync(
      join(dir, "snapshots/index.json"),
      JSON.stringify({
        snapshots: [
          {
            snapshotDate: yesterday,
            buildId: "x",
            methodologyVersions: {},
            contentHash: "0".repeat(64),
            byteSize: 1,
            createdAt: 1,
            digestSha256: null,
            databaseSha256: null,
            datedFiles: [],
            chainIndex: 0,
            previousChainHash: "0".repeat(64),
            chainHash: "1".repeat(64),
          },
        ],
      }),
    );
    const start = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    const r = await op(a.ops, "POST", `/api/backfill-stability-index?startDay=${start}&endDay=2999-01-01`);
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toMatchObject({
      dryRun: true,
      startDay: start,
      endDay: yesterday,
      endDayClamped: true,
      days: 5,
      alreadyPublished: 1,
    });
    expect(body.wouldBuild).toHaveLength(4);
    expect(body.wouldBuild).not.toContain(new Date().toISOString().slice(0, 10));
    const unix = await (
      await op(
        a.ops,
        "POST",
        `/api/backfill-stability-index?startDay=${Math.floor(Date.parse(`${start}T12:00:00Z`) / 1000)}`,
      )
    ).json();
    expect([unix.startDay, unix.endDay]).toEqual([start, yesterday]);
    expect(executed).toHaveLength(0);

    expect(
      (await op(a.ops, "POST", `/api/backfill-stability-index?startDay=${yesterday}&endDay=${start}`)).status,
    ).toBe(400);
    expect((await op(a.ops, "POST", "/api/backfill-stability-index?startDay=2025-02-30")).status).toBe(400);
    expect((await op(a.ops, "POST", "/api/backfill-stability-index")).status).toBe(503); // no depeg ledger to default startDay from

    await op(a.ops, "POST", `/api/backfill-stability-index?startDay=${start}&dry-run=false`);
    expect(executed).toEqual([{ script: "build/cli.ts", args: ["build", "--from", start, "--to", yesterday] }]);
  });
});

describe("maintenance mode (issue 19 item 6)", () => {
  it("switched on one instance: the public lane of another answers 503 within a couple of seconds; off: 200 again", async () => {
    expect((await b.pub.request("/api/health")).status).toBe(200);
    const on = await op(a.ops, "POST", "/api/admin/maintenance", {
      body: { enabled: true, message: "Upgrading the state store" },
    });
    expect(await on.json()).toMatchObject({ enabled: true, message: "Upgrading the state store", updatedBy: TOKEN_ID });
    // Polls until the other instance notices (its refresh is about a second); the timeout is liveness only.
    await expect
      .poll(async () => (await b.pub.request("/api/health")).status, { timeout: 30_000, interval: 100 })
      .toBe(503);
    const r = await b.pub.request("/api/stablecoins", {
      headers: { "X-API-Key": "bl_live_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
    });
    expect([r.status, r.headers.get("Retry-After")]).toEqual([503, "300"]);
    expect(await r.json()).toEqual({ error: "maintenance", message: "Upgrading the state store" });
    // preflights and the operator lane keep working
    expect((await b.pub.request("/api/stablecoins", { method: "OPTIONS" })).status).toBe(204);
    expect((await op(b.ops, "GET", "/api/admin/maintenance")).status).toBe(200);

    await op(a.ops, "POST", "/api/admin/maintenance", { body: { enabled: false } });
    await expect
      .poll(async () => (await b.pub.request("/api/health")).status, { timeout: 30_000, interval: 100 })
      .toBe(200);
    expect((await op(a.ops, "POST", "/api/admin/maintenance", { body: { enabled: "yes" } })).status).toBe(400);
  });
});
