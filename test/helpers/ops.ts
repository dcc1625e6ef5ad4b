import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import { expect } from "vitest";
import { JobRunner } from "../../api/lib/jobs.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { MaintenanceGate } from "../../api/lib/maintenance.ts";
import { OperatorAuth } from "../../api/lib/ops-access.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { createOpsApp, type OpsAppDeps } from "../../api/ops-app.ts";
import { startHistoryReplay } from "./history-replay-server.ts";
import { createTestSchema } from "./pg-schema.ts";

/** A local JWKS endpoint serving RSA signing keys made with node:crypto; `down` makes it answer 503, `hang` never answer. */
export interface JwksServer {
  url: string;
  kid: string;
  privateKey: KeyObject;
  /** Requests served so far. */
  hits: number;
  down: boolean;
  /** Requests are accepted (counted in `hits`) and never answered until `close`. */
  hang: boolean;
  close(): Promise<void>;
}

/** Starts a JWKS server on 127.0.0.1 with one RS256 key (`kid`). */
export async function startJwksServer(kid = "test-key-1"): Promise<JwksServer> {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" };
  const state = { hits: 0, down: false, hang: false };
  const server: Server = createServer((_req, res) => {
    state.hits += 1;
    if (state.hang) return;
    if (state.down) return void res.writeHead(503).end("down");
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cdn-cgi/access/certs`;
  return {
    url,
    kid,
    privateKey,
    get hits() {
      return state.hits;
    },
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    get hang() {
      return state.hang;
    },
    set hang(v: boolean) {
      state.hang = v;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  } as JwksServer;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** A compact RS256 JWS of `claims` signed with `key` (header `kid`, or `header` overrides). */
export function signJwt(key: KeyObject, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const h = b64({ alg: "RS256", typ: "JWT", ...header });
  const p = b64(claims);
  const sig = header.alg === "none" ? "" : sign("sha256", Buffer.from(`${h}.${p}`), key).toString("base64url");
  return `${h}.${p}.${sig}`;
}

/** A stablecoin list entry as the build publishes it (StablecoinDataSchema), USD peg. */
export function listCoin(id: string, symbol: string, capUsd: number | null, unreviewed: boolean) {
  return {
    id,
    name: `${symbol} Dollar`,
    symbol,
    geckoId: null,
    pegType: "peggedUSD",
    pegMechanism: "fiat-backed",
    priceSource: "defillama",
    priceConfidence: null,
    price: 1,
    priceUpdatedAt: null,
    priceObservedAt: null,
    priceObservedAtMode: null,
    priceSyncedAt: null,
    circulating: capUsd === null ? {} : { peggedUSD: capUsd },
    circulatingPrevDay: {},
    circulatingPrevWeek: {},
    circulatingPrevMonth: {},
    chainCirculating: {},
    chains: ["Ethereum"],
    consensusSources: [],
    ...(unreviewed ? { unreviewed: true } : {}),
  };
}

/**
 * Publishes a minimal build under data dir `dir`: a manifest listing `site-data/stablecoins.json`
 * (the given coins) and `latest.json` pointing at it; `extra` adds files (path → JSON value).
 */
export function publishFakeBuild(
  dir: string,
  buildId: string,
  coins: unknown[],
  extra: Record<string, unknown> = {},
): void {
  const files: Record<string, unknown> = { "site-data/stablecoins.json": { peggedAssets: coins }, ...extra };
  const entries = Object.entries(files).map(([path, value]) => {
    const text = JSON.stringify(value);
    const full = join(dir, "builds", buildId, path);
    mkdirSync(join(full, ".."), { recursive: true });
    writeFileSync(full, text);
    return {
      path,
      sha256: createHash("sha256").update(text).digest("hex"),
      bytes: text.length,
      rows: null,
      dataAsOf: null,
      schemaVersion: "1.0.0",
      artifact: path.split("/")[1].replace(/\.json$/, ""),
    };
  });
  const manifest = {
    schemaVersion: "1.4.0",
    buildId,
    asOf: Math.floor(Date.now() / 1000),
    generatedAt: Math.floor(Date.now() / 1000),
    clock: "wall",
    contentHash: "0".repeat(64),
    files: entries,
    sources: [],
    readerDropped: {},
    circuits: {},
    models: [],
    qualityRejections: {},
  };
  writeFileSync(join(dir, "builds", buildId, "manifest.json"), JSON.stringify(manifest));
  writeFileSync(
    join(dir, "latest.json"),
    JSON.stringify({ buildId, asOf: manifest.asOf, manifest: `builds/${buildId}/manifest.json` }),
  );
}

/**
 * Access settings of a test operator lane: the JWT audience and issuer it accepts (JWTs checked against
 * a JWKS URL), its service token, and the origins a mutation may come from (undefined: OperatorAuth's default).
 */
export interface TestAccess {
  audience: string;
  issuer: string;
  serviceToken: { id: string; secret: string };
  allowedOrigins?: string[];
}

/**
 * An operator app for tests (createOpsApp): OperatorAuth built from `access` with JWTs checked against
 * `jwksUrl`, the wall clock, every other dependency as given.
 */
export function testOpsApp(o: Omit<OpsAppDeps, "auth" | "clockMode"> & { jwksUrl: string; access: TestAccess }): Hono {
  const { jwksUrl, access, ...deps } = o;
  return createOpsApp({
    auth: new OperatorAuth({
      jwksUrl,
      audiences: [access.audience],
      issuer: access.issuer,
      serviceTokenId: access.serviceToken.id,
      serviceTokenSecret: access.serviceToken.secret,
      allowedOrigins: access.allowedOrigins,
    }),
    clockMode: "wall",
    ...deps,
  });
}

/** Access service token the e2e operator apps accept, and the headers of an operator request with it (mutations included). */
export const E2E_SERVICE_TOKEN = { id: "svc-token-id-0001", secret: "svc-token-secret-0123456789abcdef" };
export const E2E_OPERATOR_HEADERS = {
  "CF-Access-Client-Id": E2E_SERVICE_TOKEN.id,
  "CF-Access-Client-Secret": E2E_SERVICE_TOKEN.secret,
  "X-Ballast-Admin": "1",
};
/** Access settings of the e2e operator apps: E2E_SERVICE_TOKEN, no allowed origin. */
export const E2E_ACCESS: TestAccess = {
  audience: "ops-api-aud",
  issuer: "https://ballast-team.cloudflareaccess.com",
  serviceToken: E2E_SERVICE_TOKEN,
  allowedOrigins: [],
};

/**
 * POSTs (or `method`) `path` to `ops` (an operator app answering jobs with 202 at once: expects 202),
 * then polls the job's status path (every 500 ms, up to 10 min as a backstop for a hang) until it is no
 * longer queued or running. Returns the 202 body and the finished job (`result` typed `T`).
 */
export async function runJobToEnd<T>(ops: Hono, path: string, headers: Record<string, string> = {}, method = "POST") {
  const r = await ops.request(path, { method, headers: { ...E2E_OPERATOR_HEADERS, ...headers } });
  expect(r.status).toBe(202);
  const accepted = (await r.json()) as { requestId: string; statusPath: string };
  const status = async () => {
    const j = await ops.request(accepted.statusPath, { headers: E2E_OPERATOR_HEADERS });
    return (await j.json()) as { status: string; result: T; error: string | null };
  };
  await expect
    .poll(async () => (await status()).status, { timeout: 600_000, interval: 500 })
    .not.toMatch(/queued|running/);
  return { accepted, job: await status() };
}

/** The operator lane of an e2e job test file (startOpsLane): its services, and requests over it. */
export interface OpsLane {
  sql: SqlClient;
  keys: KeyStore;
  jobs: JobRunner;
  /** The operator app: E2E_ACCESS, real jobs answered with 202 at once. */
  ops: Hono;
  /** The history replay servers when started with `replay`; their `requests` log what the jobs asked. */
  replay?: HistoryReplay;
  /** `method` `path` with the operator headers (E2E_OPERATOR_HEADERS, then `headers`). */
  call(method: string, path: string, headers?: Record<string, string>): Promise<Response>;
  /** Jobs recorded so far (0 while the job table does not exist: no job has run). */
  jobCount(): Promise<number>;
  /** runJobToEnd over this lane: POST (or `method`), wait for the job to end. */
  runToEnd<T>(
    path: string,
    headers?: Record<string, string>,
    method?: string,
  ): Promise<{
    accepted: { requestId: string; statusPath: string };
    job: { status: string; result: T; error: string | null };
  }>;
  /** Stops the job runner and the servers, drops the schema and removes `dataDir`. */
  close(): Promise<void>;
}

/** The history replay servers of startHistoryReplay. */
export type HistoryReplay = Awaited<ReturnType<typeof startHistoryReplay>>;

/**
 * Starts the operator lane of an e2e job test file over data dir `dataDir` (already published into by
 * the caller): a JWKS server, a fresh Postgres schema (`schemaPrefix`) with the key store, a real job
 * runner whose jobs run with `BALLAST_DATA_DIR=dataDir`, `BALLAST_LOG=silent` and the OS temp dir as
 * scratch (`BALLAST_SCRATCH_DIR`: the parsed-capture cache the in-process builds of the suite have
 * filled, so a job's build does not parse the recorded captures again), and the operator app
 * (e2eOpsApp, ledger `ledgerPath`, default `<dataDir>/onchain.duckdb`). With `replay` the history
 * replay servers of the recorded payloads of `replay.captureDir` from `replay.from` to `replay.to`
 * (YYYY-MM-DD) serve as the jobs' upstreams (`BALLAST_UPSTREAM_URLS`).
 */
export async function startOpsLane(o: {
  schemaPrefix: string;
  dataDir: string;
  ledgerPath?: string;
  replay?: { captureDir: string; from: string; to: string };
}): Promise<OpsLane> {
  process.env.BALLAST_LOG = "silent";
  const jwks = await startJwksServer();
  const schema = await createTestSchema(o.schemaPrefix);
  const sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  const keys = new KeyStore(sql, "pepper-for-tests-0123456789");
  await keys.init();
  const replay = o.replay ? await startHistoryReplay(o.replay.captureDir, o.replay.from, o.replay.to) : undefined;
  const jobs = new JobRunner(sql, {
    env: {
      ...process.env,
      BALLAST_DATA_DIR: o.dataDir,
      BALLAST_SCRATCH_DIR: tmpdir(),
      ...(replay ? { BALLAST_UPSTREAM_URLS: replay.upstreamUrls } : {}),
      BALLAST_LOG: "silent",
    },
  });
  const ledgerPath = o.ledgerPath ?? join(o.dataDir, "onchain.duckdb");
  const ops = e2eOpsApp({ jwksUrl: jwks.url, keys, sql, jobs, dataDir: o.dataDir, ledgerPath });
  const call = async (method: string, path: string, headers: Record<string, string> = {}) =>
    ops.request(path, { method, headers: { ...E2E_OPERATOR_HEADERS, ...headers } });
  const count = (q: string) => sql.query<{ n: number }>(q).then((r) => r.rows[0].n);
  return {
    sql,
    keys,
    jobs,
    ops,
    replay,
    call,
    jobCount: async () =>
      (await count("select (to_regclass('admin_jobs') is not null)::int as n")) === 0
        ? 0
        : count("select count(*)::int as n from admin_jobs"),
    runToEnd: (path, headers = {}, method = "POST") => runJobToEnd(ops, path, headers, method),
    close: async () => {
      await jobs.close();
      await replay?.close();
      await sql.close();
      await schema.drop();
      await jwks.close();
      rmSync(o.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * An operator app for e2e job tests over data dir `dataDir` and ledger `ledgerPath`: E2E_ACCESS (JWTs
 * checked against `jwksUrl`), wall clock, the given real job runner, jobs answered with 202 at once (jobWaitMs 0).
 */
export function e2eOpsApp(o: {
  jwksUrl: string;
  keys: KeyStore;
  sql: SqlClient;
  jobs: JobRunner;
  dataDir: string;
  ledgerPath: string;
}): Hono {
  return testOpsApp({
    jwksUrl: o.jwksUrl,
    access: E2E_ACCESS,
    keys: o.keys,
    store: new PublishedStore(fsReader(o.dataDir), 0),
    maintenance: new MaintenanceGate(o.sql),
    jobs: o.jobs,
    ledgerPath: o.ledgerPath,
    dataDir: o.dataDir,
    jobWaitMs: 0,
  });
}
