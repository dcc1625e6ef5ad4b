import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Hono } from "hono";
import { expect } from "vitest";
import type { JobRunner } from "../../api/lib/jobs.ts";
import type { KeyStore, SqlClient } from "../../api/lib/key-store.ts";
import { MaintenanceGate } from "../../api/lib/maintenance.ts";
import { OperatorAuth } from "../../api/lib/ops-access.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { createOpsApp } from "../../api/ops-app.ts";

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

/** Access service token the e2e operator apps accept, and the headers of an operator request with it (mutations included). */
export const E2E_SERVICE_TOKEN = { id: "svc-token-id-0001", secret: "svc-token-secret-0123456789abcdef" };
export const E2E_OPERATOR_HEADERS = {
  "CF-Access-Client-Id": E2E_SERVICE_TOKEN.id,
  "CF-Access-Client-Secret": E2E_SERVICE_TOKEN.secret,
  "X-Ballast-Admin": "1",
};

/**
 * An operator app for e2e job tests over data dir `dataDir` and ledger `ledgerPath`: Access
 * service-token auth (E2E_SERVICE_TOKEN; JWTs checked against `jwksUrl`), wall clock, the given real
 * job runner, jobs answered with 202 at once (jobWaitMs 0).
 */
export function e2eOpsApp(o: {
  jwksUrl: string;
  keys: KeyStore;
  sql: SqlClient;
  jobs: JobRunner;
  dataDir: string;
  ledgerPath: string;
}): Hono {
  return createOpsApp({
    auth: new OperatorAuth({
      jwksUrl: o.jwksUrl,
      audiences: ["ops-api-aud"],
      issuer: "https://ballast-team.cloudflareaccess.com",
      serviceTokenId: E2E_SERVICE_TOKEN.id,
      serviceTokenSecret: E2E_SERVICE_TOKEN.secret,
      allowedOrigins: [],
    }),
    keys: o.keys,
    store: new PublishedStore(fsReader(o.dataDir), 0),
    clockMode: "wall",
    maintenance: new MaintenanceGate(o.sql),
    jobs: o.jobs,
    ledgerPath: o.ledgerPath,
    dataDir: o.dataDir,
    jobWaitMs: 0,
  });
}

/**
 * POSTs `path` to `ops` (an e2eOpsApp: expects 202), then polls the job's status path until it is no
 * longer queued or running (up to 10 min). Returns the 202 body and the finished job (`result` typed `T`).
 */
export async function runJobToEnd<T>(ops: Hono, path: string, headers: Record<string, string> = {}) {
  const r = await ops.request(path, { method: "POST", headers: { ...E2E_OPERATOR_HEADERS, ...headers } });
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
