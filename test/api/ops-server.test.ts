import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../api/server.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

const TOKEN_ID = "svc-token-id-0001";
const TOKEN_SECRET = "svc-token-secret-0123456789abcdef";
const SVC = { "CF-Access-Client-Id": TOKEN_ID, "CF-Access-Client-Secret": TOKEN_SECRET };

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let dir: string;
let running: RunningServer;

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  schema = await createTestSchema("ballast_ops_srv");
  dir = mkdtempSync(join(tmpdir(), "ballast-ops-srv-"));
  running = await startServer({
    PORT: 0,
    HOST: "127.0.0.1",
    BALLAST_DATA_DIR: dir,
    CLOCK: "wall",
    DATABASE_URL: schema.url,
    API_KEY_PEPPER: "pepper-for-tests-0123456789",
    STATUS_RECORD_INTERVAL_SEC: 0,
    OPS_PORT: 0,
    OPS_HOST: "127.0.0.1",
    OPS_SERVICE_TOKEN_ID: TOKEN_ID,
    OPS_SERVICE_TOKEN_SECRET: TOKEN_SECRET,
    OPS_JOB_WAIT_MS: 25_000,
    BALLAST_ONCHAIN_LEDGER: join(dir, "ledger", "onchain.duckdb"),
  });
});
afterAll(async () => {
  await running?.close();
  await schema?.drop();
});

const opsUrl = (path: string) => `http://127.0.0.1:${running.opsPort}${path}`;
const pubUrl = (path: string) => `http://127.0.0.1:${running.port}${path}`;

describe("operator listener (spec 4.5, 5.6)", () => {
  it("listens on its own port: operator routes there, 404 on the public listener; public routes are not served there", async () => {
    expect(running.opsPort).toBeGreaterThan(0);
    expect(running.opsPort).not.toBe(running.port);
    const ok = await fetch(opsUrl("/api/admin/maintenance"), { headers: SVC });
    expect([ok.status, ok.headers.get("Cache-Control")]).toEqual([200, "no-store"]);
    expect((await fetch(opsUrl("/api/admin/maintenance"))).status).toBe(401);
    expect((await fetch(pubUrl("/api/admin/maintenance"), { headers: SVC })).status).toBe(404);
    expect((await fetch(pubUrl("/api/api-keys"), { headers: SVC })).status).toBe(404);
    expect((await fetch(opsUrl("/api/health"), { headers: SVC })).status).toBe(404);
    expect((await fetch(pubUrl("/api/health"))).status).toBe(200);
  });

  it("runs the real on-chain jobs (child processes of build/onchain-cli.ts) against the configured ledger", async () => {
    const sync = await fetch(opsUrl("/api/debug-sync-state"), { headers: SVC });
    expect(sync.status).toBe(200);
    expect(await sync.json()).toEqual([]);
    const reset = await fetch(opsUrl("/api/reset-blacklist-sync"), {
      method: "POST",
      headers: { ...SVC, "X-Ballast-Admin": "1", "Idempotency-Key": "srv-reset-1" },
    });
    expect([reset.status, reset.headers.get("X-Idempotent-Replay")]).toEqual([200, "false"]);
    expect(await reset.json()).toEqual({ ok: true, evmReset: 0, tronReset: 0 });
    const replay = await fetch(opsUrl("/api/reset-blacklist-sync"), {
      method: "POST",
      headers: { ...SVC, "X-Ballast-Admin": "1", "Idempotency-Key": "srv-reset-1" },
    });
    expect([replay.status, replay.headers.get("X-Idempotent-Replay")]).toEqual([200, "true"]);
  });

  it("maintenance switched on the operator listener closes the public one (503, Retry-After: 300), and reopens it", async () => {
    const post = (enabled: boolean) =>
      fetch(opsUrl("/api/admin/maintenance"), {
        method: "POST",
        headers: { ...SVC, "X-Ballast-Admin": "1", "Content-Type": "application/json" },
        body: JSON.stringify({ enabled }),
      });
    expect((await post(true)).status).toBe(200);
    const r = await fetch(pubUrl("/api/health"));
    expect([r.status, r.headers.get("Retry-After")]).toEqual([503, "300"]);
    expect((await r.json()).error).toBe("maintenance");
    expect((await post(false)).status).toBe(200);
    expect((await fetch(pubUrl("/api/health"))).status).toBe(200);
  });

  it("does not start without operator configuration", async () => {
    const other = await startServer({
      PORT: 0,
      HOST: "127.0.0.1",
      BALLAST_DATA_DIR: dir,
      CLOCK: "wall",
      DATABASE_URL: schema.url,
      API_KEY_PEPPER: "pepper-for-tests-0123456789",
      STATUS_RECORD_INTERVAL_SEC: 0,
      OPS_PORT: 0,
    });
    try {
      expect(other.opsPort).toBeUndefined();
      expect(other.opsServer).toBeUndefined();
    } finally {
      await other.close();
    }
  });
});
