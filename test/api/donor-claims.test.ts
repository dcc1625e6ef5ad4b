/**
 * Donor key claims (spec 5.3, 7 rules 1-2) end to end: claim messages signed by anvil accounts, the
 * donations ledger built by the real load stage and SQL from a test ledger (test/helpers/donations.ts),
 * served by a published build with hand-set grades; keys and claims in a Postgres schema of this file;
 * the per-IP limit shared by two app instances through a redis-server of this file. One test per
 * reason code of spec 7 rule 1.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import type { Redis } from "ioredis";
import { type Hex, numberToHex, parseSignature, serializeSignature, verifyMessage } from "viem";
import type { HDAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.ts";
import {
  CLAIM_STATEMENT,
  type ClaimIssued,
  type ClaimReason,
  claimMessage,
  type DonorClaimConfig,
} from "../../api/lib/donor-claims.ts";

/** The order of secp256k1 (SEC 2), written out here rather than taken from the code under test. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter, openRedis } from "../../api/lib/rate-limit.ts";
import type { DonationsLedgerPayload } from "../../site-data/donations-ledger.ts";
import { type AnvilHandle, startAnvil } from "../helpers/anvil.ts";
import { account, buildLedger, CONTRACTS, gradesPayload, receipt, writeLedger } from "../helpers/donations.ts";
import { publishFakeBuild } from "../helpers/ops.ts";
import { must } from "../helpers/must.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { OwnRedis } from "../helpers/redis-server.ts";

const PEPPER = "pepper-for-claim-tests-0123456789";
const CONFIG: DonorClaimConfig = { open: true, domain: "ballast.test", uri: "https://ballast.test/api/", chainId: 1 };
const GRADES = { "aaa-one": "A", "eee-euro": "A-", "ccc-low": "C+" }; // nnn-new has no grade

// Accounts: 0 exactly USD 10 in AAA; 1 six counted USD plus C+, pool and unreviewed receipts; 2 USD 5 graded + 7 ungraded;
// 3 EUR 9.5 at 1.1; 4 and 5 eligible (revoked, orphaned); 6 eligible but its address gets code; 7 never donated;
// 12 eligible (replay of a failed first attempt).
const RECEIPTS = [
  receipt(account(0).address, CONTRACTS.aaa, "10", "2025-09-06T00:00:00Z"),
  receipt(account(1).address, CONTRACTS.aaa, "6", "2025-09-06T00:00:00Z"),
  receipt(account(1).address, CONTRACTS.ccc, "50", "2025-09-06T00:00:00Z"),
  receipt(account(1).address, CONTRACTS.aaa, "100", "2025-09-06T00:00:00Z", "pool"),
  receipt(account(1).address, CONTRACTS.unreviewed, "20", "2025-09-06T00:00:00Z"),
  receipt(account(2).address, CONTRACTS.aaa, "5", "2025-09-06T00:00:00Z"),
  receipt(account(2).address, CONTRACTS.nnn, "7", "2025-09-06T00:00:00Z"),
  receipt(account(3).address.toLowerCase(), CONTRACTS.eee, "9.5", "2025-09-07T00:00:00Z"),
  receipt(account(4).address, CONTRACTS.aaa, "20", "2025-09-06T00:00:00Z"),
  receipt(account(5).address, CONTRACTS.aaa, "20", "2025-09-06T00:00:00Z"),
  receipt(account(6).address, CONTRACTS.aaa, "20", "2025-09-06T00:00:00Z", "founder"),
  receipt(account(12).address, CONTRACTS.aaa, "20", "2025-09-06T00:00:00Z"),
];

let anvil: AnvilHandle;
let redis: OwnRedis;
const redisClients: Redis[] = [];
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let ledger: DonationsLedgerPayload;
const dirs: string[] = [];
let ipCounter = 0;
let nonceCounter = 0;

/** A data dir with one published build holding the ledger (or `ledgerValue`) and grades. */
function publish(ledgerValue: unknown, grades: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "ballast-claims-"));
  dirs.push(dir);
  publishFakeBuild(dir, "claims-build", [], {
    "site-data/donations-ledger.json": ledgerValue,
    "site-data/safety-grades.json": grades,
  });
  return dir;
}

function app(
  dir: string,
  opts: { config?: Partial<DonorClaimConfig>; limiter?: KeyRateLimiter | null; keyStore?: KeyStore } = {},
): Hono {
  const limiter = new KeyRateLimiter();
  return createApp({
    store: new PublishedStore(fsReader(dir), 0),
    keys: opts.keyStore ?? keys,
    limiter,
    corsOrigins: [],
    clockMode: "wall",
    services: {
      donorClaims: {
        config: { ...CONFIG, ...opts.config },
        keys: opts.keyStore ?? keys,
        limiter: opts.limiter === undefined ? limiter : opts.limiter,
      },
    },
  });
}

/** A signed claim body of `who` with a fresh nonce (issued `ageSec` ago; `config` overrides the message's fields). */
async function signed(
  who: HDAccount,
  opts: { ageSec?: number; config?: Partial<DonorClaimConfig>; signer?: HDAccount; edit?: (m: string) => string } = {},
) {
  const issuedAt = new Date(Math.floor(Date.now() / 1000 - (opts.ageSec ?? 0)) * 1000);
  const nonce = `n0nce${String(++nonceCounter).padStart(8, "0")}`;
  let message = await claimMessage({ ...CONFIG, ...opts.config }, who.address, nonce, issuedAt);
  if (opts.edit) message = opts.edit(message);
  const signature = await (opts.signer ?? who).signMessage({ message });
  return JSON.stringify({ message, signature });
}

/**
 * The JSON of a claim answer: the 201 {@link ClaimIssued}, or `{ error, reason, ...extra }` of spec 7 rule 1
 * (the fields of the other shape are absent).
 */
type ClaimAnswer = Partial<ClaimIssued> & {
  error?: string;
  reason?: ClaimReason;
  ledgerUpdatedAt?: number;
  qualifyingUsd?: number;
  countedAssets?: string[];
};

/** POSTs a claim from a fresh client IP (each test its own per-IP budget) unless `ip` is given. */
async function claim(a: Hono, body: string, ip = `10.1.0.${++ipCounter}`) {
  const res = await a.request(
    "/api/donor-key-claims",
    { method: "POST", body, headers: { "Content-Type": "application/json" } },
    { incoming: { socket: { remoteAddress: ip } } },
  );
  return {
    status: res.status,
    cache: res.headers.get("cache-control"),
    retryAfter: res.headers.get("retry-after"),
    body: (await res.json()) as ClaimAnswer,
  };
}

let main: Hono;

beforeAll(async () => {
  anvil = await startAnvil();
  redis = await OwnRedis.start();
  schema = await createTestSchema("claims");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, PEPPER);
  await keys.init();
  ({ ledger } = await buildLedger(writeLedger(RECEIPTS)));
  main = app(publish(ledger, gradesPayload(GRADES)), { config: { rpcUrl: anvil.rpcUrl } });
});

afterAll(async () => {
  for (const r of redisClients) r.disconnect();
  await redis?.stop();
  await anvil?.stop();
  await sql?.close();
  await schema?.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("donor key claims: issuance", () => {
  it("an account with exactly USD 10 in an A-graded coin gets a 201 donor key that works at 10 requests per minute; its replay is 409 claim_exists", async () => {
    const r = await claim(main, await signed(account(0)));
    expect(r.status).toBe(201);
    expect(r.cache).toBe("no-store");
    expect(r.body).toEqual({
      status: "issued",
      token: expect.stringMatching(/^bl_live_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/),
      key: {
        keyPrefix: expect.stringMatching(/^[0-9a-f]{16}$/),
        maskedToken: expect.stringMatching(/^bl_live_[0-9a-f]{16}_…$/),
        tier: "donor",
        rateLimitPerMinute: 10,
        expiresAt: null,
      },
    });
    const token = must(r.body.token, "the issued token");
    expect(token.slice(8, 24)).toBe(must(r.body.key, "the issued key").keyPrefix);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await main.request("/api/stablecoins", { headers: { "X-API-Key": token } })).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    // the claim and its key are stored together, one per wallet
    const { rows } = await sql.query<{ address: string; tier: string; name: string }>(
      "select c.address, k.tier, k.name from api_key_donor_claims c join api_keys k on k.key_prefix = c.key_prefix where c.address = $1",
      [account(0).address.toLowerCase()],
    );
    expect(rows).toEqual([
      { address: account(0).address.toLowerCase(), tier: "donor", name: `donor ${account(0).address.toLowerCase()}` },
    ]);
    // re-signing (a new message) never rotates: 409, and still one key
    const again = await claim(main, await signed(account(0), { ageSec: 5 }));
    expect([again.status, again.body.reason, again.cache]).toEqual([409, "claim_exists", "no-store"]);
    expect(
      (await sql.query("select 1 from api_keys where name = $1", [`donor ${account(0).address.toLowerCase()}`])).rows,
    ).toHaveLength(1);
  });

  it("an operator rotation of a donor key moves its claim: the wallet still answers claim_exists, never claim_orphaned", async () => {
    const claimed = must(await keys.donorClaim(account(0).address.toLowerCase()), "account 0's claim");
    const rotated = must(await keys.rotate(must(claimed.key, "account 0's claimed key").id), "the rotated key");
    expect(must(await keys.donorClaim(account(0).address.toLowerCase()), "account 0's claim").keyPrefix).toBe(
      rotated.record.keyPrefix,
    );
    expect((await claim(main, await signed(account(0), { ageSec: 3 }))).body.reason).toBe("claim_exists");
    expect((await main.request("/api/stablecoins", { headers: { "X-API-Key": rotated.token } })).status).not.toBe(401);
  });

  it("a EUR-coin donation counts at the ECB rate of its receipt date (9.5 EUR x 1.1 = USD 10.45)", async () => {
    expect((await claim(main, await signed(account(3)))).status).toBe(201);
  });

  it("two simultaneous first claims of one wallet issue one key: the other answers 409 claim_exists", async () => {
    const [x, y] = await Promise.all([
      claim(main, await signed(account(8), {})),
      claim(main, await signed(account(8), { ageSec: 1 })),
    ]);
    // account 8 never donated: both ineligible, nothing issued
    expect([x.status, y.status]).toEqual([403, 403]);
    const race = app(
      publish(
        {
          ...ledger,
          receipts: [
            ...ledger.receipts,
            { ...ledger.receipts[0], txHash: `0x${"f".repeat(64)}`, from: account(9).address.toLowerCase() },
          ],
        },
        gradesPayload(GRADES),
      ),
    );
    const both = await Promise.all([
      claim(race, await signed(account(9))),
      claim(race, await signed(account(9), { ageSec: 1 })),
    ]);
    expect(both.map((b) => b.status).sort()).toEqual([201, 409]);
    expect(
      must(
        both.find((b) => b.status === 409),
        "the 409 answer",
      ).body.reason,
    ).toBe("claim_exists");
  });
});

describe("donor key claims: one test per reason code (spec 7 rule 1)", () => {
  it("400 body_invalid: not JSON, missing signature, unknown field; 413 body_invalid past 4096 bytes", async () => {
    for (const body of [
      "{not json",
      JSON.stringify({ message: "x" }),
      JSON.stringify({ message: "x", signature: "0x00", extra: 1 }),
    ]) {
      const r = await claim(main, body);
      expect([r.status, r.body.reason, r.cache]).toEqual([400, "body_invalid", "no-store"]);
    }
    const big = await claim(main, JSON.stringify({ message: "x".repeat(5000), signature: "0x00" }));
    expect([big.status, big.body]).toEqual([
      413,
      { error: "Request body larger than 4096 bytes", reason: "body_invalid" },
    ]);
  });

  it("400 siwe_invalid: another domain, another URI, an old message, a changed statement, not EIP-4361", async () => {
    const bodies = [
      await signed(account(0), { config: { domain: "evil.test" } }),
      await signed(account(0), { config: { uri: "https://ballast.test/other/" } }),
      await signed(account(0), { ageSec: 301 }),
      await signed(account(0), { edit: (m) => m.replace(CLAIM_STATEMENT, "Give me a key.") }),
      JSON.stringify({ message: "hello", signature: "0x00" }),
    ];
    for (const body of bodies) {
      const r = await claim(main, body);
      expect([r.status, r.body.reason]).toEqual([400, "siwe_invalid"]);
    }
  });

  it("400 signature_invalid: signed by another key, a malformed signature, or an address with code (contract wallet)", async () => {
    expect((await claim(main, await signed(account(4), { signer: account(7) }))).body.reason).toBe("signature_invalid");
    const body = JSON.parse(await signed(account(4)));
    expect((await claim(main, JSON.stringify({ ...body, signature: "0x1234" }))).body.reason).toBe("signature_invalid");
    // account 6 is eligible, but its address now carries code (as a smart account would): refused over RPC
    await fetch(anvil.rpcUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "anvil_setCode",
        params: [account(6).address, "0x6080604052"],
      }),
    });
    const r = await claim(main, await signed(account(6)));
    expect([r.status, r.body.reason, r.body.error]).toEqual([
      400,
      "signature_invalid",
      "Claim message or signature is invalid: contract accounts cannot claim",
    ]);
    // without the RPC setting the same signature passes (ECDSA recovery alone)
    expect((await claim(app(publish(ledger, gradesPayload(GRADES))), await signed(account(6)))).status).toBe(201);
  });

  it("400 signature_invalid: the high-s twin (n − s, flipped v) of a valid signature, which ECDSA recovery accepts", async () => {
    const body = JSON.parse(await signed(account(7))) as { message: string; signature: Hex };
    const { r, s, yParity } = parseSignature(body.signature);
    const highS = serializeSignature({
      r,
      s: numberToHex(SECP256K1_N - BigInt(s), { size: 32 }),
      yParity: 1 - yParity,
    });
    expect(highS).not.toBe(body.signature);
    // recovery alone accepts it for the same address: only the low-s rule refuses it
    expect(await verifyMessage({ address: account(7).address, message: body.message, signature: highS })).toBe(true);
    const r1 = await claim(main, JSON.stringify({ ...body, signature: highS }));
    expect([r1.status, r1.body.reason]).toEqual([400, "signature_invalid"]);
    // the refused twin did not use up the message: the canonical signature is judged (account 7 never donated)
    const r2 = await claim(main, JSON.stringify(body));
    expect([r2.status, r2.body.reason]).toEqual([403, "ineligible"]);
  });

  it("400 siwe_invalid: a signed body presented again after its first attempt failed, from the same or another client", async () => {
    const body = await signed(account(12));
    // first attempt: grades held, 503 (the wallet is eligible otherwise)
    const first = await claim(app(publish(ledger, gradesPayload(GRADES, true))), body, "10.2.0.1");
    expect([first.status, first.body.reason]).toEqual([503, "safety_scores_unavailable"]);
    for (const ip of ["10.2.0.1", "10.2.0.2"]) {
      const again = await claim(main, body, ip);
      expect([again.status, again.body.reason, again.body.error]).toEqual([
        400,
        "siwe_invalid",
        "Claim message or signature is invalid: this message was already used; sign a new one",
      ]);
    }
    expect(await keys.donorClaim(account(12).address.toLowerCase())).toBeNull();
    // the owner signs a new message and gets the key
    expect((await claim(main, await signed(account(12)), "10.2.0.1")).status).toBe(201);
  });

  it("403 claims_closed, before the limiter and the body", async () => {
    const closed = app(publish(ledger, gradesPayload(GRADES)), { config: { open: false }, limiter: null });
    const r = await claim(closed, "{not json");
    expect([r.status, r.body]).toEqual([403, { error: "Supporter key claims are paused", reason: "claims_closed" }]);
  });

  it("403 claim_revoked: the wallet's key was deactivated; the claim is looked up before grading", async () => {
    const first = await claim(main, await signed(account(4)));
    expect(first.status).toBe(201);
    const issued = must(first.body.key, "the issued key");
    await keys.deactivate(
      must(
        (await keys.list()).find((k) => k.keyPrefix === issued.keyPrefix),
        "the issued key listed",
      ).id,
    );
    // grades held: the existing claim still answers first
    const held = app(publish(ledger, gradesPayload(GRADES, true)));
    const r = await claim(held, await signed(account(4), { ageSec: 2 }));
    expect([r.status, r.body.reason]).toEqual([403, "claim_revoked"]);
  });

  it("403 ineligible with ledgerUpdatedAt, qualifyingUsd and countedAssets (C+, pool and unreviewed receipts do not count)", async () => {
    const r = await claim(main, await signed(account(1)));
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      error: "Not eligible: qualifying donations total USD 6.00 (at least USD 10 needed)",
      reason: "ineligible",
      ledgerUpdatedAt: Date.parse("2025-09-10T00:00:00Z") / 1000,
      qualifyingUsd: 6,
      countedAssets: ["AAA on ethereum"],
    });
    // the embedded default ships an empty ledger: qualifyingUsd 0
    const empty = await claim(
      app(publish({ ...ledger, receipts: [] }, gradesPayload(GRADES))),
      await signed(account(11)),
    );
    expect([empty.status, empty.body.reason, empty.body.qualifyingUsd, empty.body.countedAssets]).toEqual([
      403,
      "ineligible",
      0,
      [],
    ]);
  });

  it("409 claim_orphaned: the claim's key row is gone (terminal, never auto-heals)", async () => {
    const first = await claim(main, await signed(account(5)));
    expect(first.status).toBe(201);
    await sql.query("delete from api_keys where key_prefix = $1", [must(first.body.key, "the issued key").keyPrefix]);
    for (let i = 0; i < 2; i++)
      expect((await claim(main, await signed(account(5), { ageSec: i + 1 }))).body.reason).toBe("claim_orphaned");
  });

  it("429 rate_limited: 10 attempts per 60 s per client IP, exact across two instances sharing Redis, before the body is read", async () => {
    const clients = await Promise.all([openRedis(redis.url), openRedis(redis.url)]);
    redisClients.push(...clients);
    const dir = publish(ledger, gradesPayload(GRADES));
    const [a, b] = clients.map((c) => app(dir, { limiter: new KeyRateLimiter(c) }));
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await claim(i % 2 ? b : a, "{not json", "10.9.9.9")).status);
    expect(statuses).toEqual([...Array(10).fill(400), 429, 429]);
    const r = await claim(a, "{not json", "10.9.9.9");
    expect([r.status, r.retryAfter, r.body]).toEqual([
      429,
      "60",
      { error: "Too many claim attempts from this address", reason: "rate_limited" },
    ]);
    expect((await claim(b, "{not json", "10.9.9.10")).status).toBe(400); // another IP has its own budget
  });

  it("503 rate_limiter_missing (no limiter wired) and rate_limit_unavailable (Redis not answering)", async () => {
    const dir = publish(ledger, gradesPayload(GRADES));
    const missing = await claim(app(dir, { limiter: null }), await signed(account(0)));
    expect([missing.status, missing.retryAfter, missing.body.reason]).toEqual([503, "60", "rate_limiter_missing"]);
    const dead = await openRedis("redis://127.0.0.1:1", { readyWaitMs: 50 });
    redisClients.push(dead);
    const down = await claim(app(dir, { limiter: new KeyRateLimiter(dead) }), await signed(account(0)));
    expect([down.status, down.retryAfter, down.body.reason]).toEqual([503, "60", "rate_limit_unavailable"]);
  });

  it("503 donations_ledger_invalid: a ledger failing its schema or missing, never a partial answer", async () => {
    const corrupt = await claim(
      app(publish({ ...ledger, receipts: [{ from: "nope" }] }, gradesPayload(GRADES))),
      await signed(account(0)),
    );
    expect([corrupt.status, corrupt.body.reason]).toEqual([503, "donations_ledger_invalid"]);
    const dir = mkdtempSync(join(tmpdir(), "ballast-claims-"));
    dirs.push(dir);
    publishFakeBuild(dir, "no-ledger", [], { "site-data/safety-grades.json": gradesPayload(GRADES) });
    expect((await claim(app(dir), await signed(account(0)))).body.reason).toBe("donations_ledger_invalid");
  });

  it("503 safety_scores_unavailable: grades held, missing or corrupt", async () => {
    for (const grades of [gradesPayload(GRADES, true), { grades: "corrupt" }]) {
      const r = await claim(app(publish(ledger, grades)), await signed(account(7)));
      expect([r.status, r.retryAfter, r.body.reason]).toEqual([503, "60", "safety_scores_unavailable"]);
    }
  });

  it("503 grade_unavailable when donations in an ungraded coin could reach the threshold, with Retry-After: 60", async () => {
    const r = await claim(main, await signed(account(2)));
    expect([r.status, r.retryAfter, r.body.reason]).toEqual([503, "60", "grade_unavailable"]);
    // once the coin is graded below B- the same wallet is simply ineligible (5 USD)
    const graded = await claim(
      app(publish(ledger, gradesPayload({ ...GRADES, "nnn-new": "C" }))),
      await signed(account(2)),
    );
    expect([graded.status, graded.body.reason, graded.body.qualifyingUsd]).toEqual([403, "ineligible", 5]);
  });

  it("503 pepper_missing: no pepper to hash the new key with", async () => {
    const noPepper = new KeyStore(sql, "");
    const r = await claim(
      app(publish(ledger, gradesPayload(GRADES)), { keyStore: noPepper }),
      await signed(account(3)),
    );
    // account 3 already claimed above: the existing claim is answered before issuance…
    expect(r.body.reason).toBe("claim_exists");
    const fresh = await claim(
      app(
        publish(
          {
            ...ledger,
            receipts: [
              ...ledger.receipts,
              { ...ledger.receipts[0], txHash: `0x${"e".repeat(64)}`, from: account(10).address.toLowerCase() },
            ],
          },
          gradesPayload(GRADES),
        ),
        { keyStore: noPepper },
      ),
      await signed(account(10)),
    );
    expect([fresh.status, fresh.body.reason]).toEqual([503, "pepper_missing"]);
    expect(await keys.donorClaim(account(10).address.toLowerCase())).toBeNull();
  });

  it("503 issue_failed: the state store fails during the claim", async () => {
    const broken = await openSqlClient({
      databaseUrl: "postgres://postgres@127.0.0.1:1/test",
      pgliteDir: "",
      connectTimeoutMs: 200,
      queryTimeoutMs: 200,
    });
    const store = new KeyStore(broken, PEPPER, { adminDeadlineMs: 500 });
    const r = await claim(app(publish(ledger, gradesPayload(GRADES)), { keyStore: store }), await signed(account(0)));
    expect([r.status, r.retryAfter, r.body.reason]).toEqual([503, "60", "issue_failed"]);
    await broken.close();
  });
});
