/**
 * The operator log records what an operator action changed: one `operator change` line per change
 * with its target and the changed fields before and after (api/routes/admin.ts, api/lib/ops-services.ts).
 * Operator app over a Postgres schema of this file; log lines read from stderr.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { JobRunner } from "../../api/lib/jobs.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { MaintenanceGate } from "../../api/lib/maintenance.ts";
import { OperatorAuth } from "../../api/lib/ops-access.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { createOpsApp } from "../../api/ops-app.ts";
import { listCoin, publishFakeBuild } from "../helpers/ops.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

const TOKEN_ID = "svc-token-audit-0001";
const SVC = {
  "CF-Access-Client-Id": TOKEN_ID,
  "CF-Access-Client-Secret": "svc-token-secret-audit-0123456789",
  "X-Ballast-Admin": "1",
  "Content-Type": "application/json",
};

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
let keys: KeyStore;
let jobs: JobRunner;
let dir: string;
let ops: Hono;
let lines: Record<string, unknown>[] = [];
let savedLog: string | undefined;

beforeAll(async () => {
  schema = await createTestSchema("ballast_ops_audit");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "" });
  keys = new KeyStore(sql, "pepper-for-audit-tests-0123456789");
  await keys.init();
  dir = mkdtempSync(join(tmpdir(), "ballast-ops-audit-"));
  publishFakeBuild(dir, "b1", [listCoin("aaa-unreviewed-1", "AAA", 1_000_000, true)]);
  jobs = new JobRunner(sql, { executor: async () => ({ exitCode: 0, stdout: "[]", stderr: "" }) });
  ops = createOpsApp({
    auth: new OperatorAuth({ serviceTokenId: TOKEN_ID, serviceTokenSecret: SVC["CF-Access-Client-Secret"] }),
    keys,
    store: new PublishedStore(fsReader(dir), 0),
    clockMode: "wall",
    maintenance: new MaintenanceGate(sql),
    jobs,
    ledgerPath: join(dir, "ledger.duckdb"),
    dataDir: dir,
  });
});
afterAll(async () => {
  await jobs?.close();
  await sql?.close();
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  savedLog = process.env.BALLAST_LOG;
  delete process.env.BALLAST_LOG;
  lines = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    for (const l of String(chunk).split("\n"))
      if (l.startsWith("{")) lines.push(JSON.parse(l) as Record<string, unknown>);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  if (savedLog === undefined) delete process.env.BALLAST_LOG;
  else process.env.BALLAST_LOG = savedLog;
});

const post = async (path: string, body: unknown = {}) => {
  const r = await ops.request(path, { method: "POST", headers: SVC, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};
const changes = () => lines.filter((l) => l.msg === "operator change");

describe("operator log: before and after of a change", () => {
  it("key create, tier/limit update, deactivate and rotate: each logs its target and the changed fields before and after", async () => {
    const created = await post("/api/api-keys", {
      name: "acme",
      ownerEmail: "ops@acme.example",
      rateLimitPerMinute: 60,
    });
    expect(created.status).toBe(201);
    const id = (created.body.key as { id: string }).id;
    const prefix = (created.body.key as { keyPrefix: string }).keyPrefix;
    expect(changes()).toEqual([
      {
        level: "info",
        stage: "ops",
        msg: "operator change",
        operator: TOKEN_ID,
        via: "service-token",
        action: "create-api-key",
        target: id,
        before: null,
        after: {
          name: "acme",
          ownerEmail: "(set)",
          tier: "standard",
          rateLimitPerMinute: 60,
          isActive: true,
          expiresAt: null,
          keyPrefix: prefix,
        },
      },
    ]);
    // the owner email and the token never reach the log
    expect(JSON.stringify(lines)).not.toContain("ops@acme.example");
    expect(JSON.stringify(lines)).not.toContain(String(created.body.token));

    lines = [];
    expect((await post(`/api/api-keys/${id}/update`, { rateLimitPerMinute: 300, name: "acme-2" })).status).toBe(200);
    expect(changes()).toMatchObject([
      {
        action: "update-api-key",
        target: id,
        before: { rateLimitPerMinute: 60, name: "acme" },
        after: { rateLimitPerMinute: 300, name: "acme-2" },
      },
    ]);
    expect(Object.keys(changes()[0].after as object).sort()).toEqual(["name", "rateLimitPerMinute"]);

    // another owner email, then none: the field is logged as changed, never its value
    lines = [];
    expect((await post(`/api/api-keys/${id}/update`, { ownerEmail: "billing@acme.example" })).status).toBe(200);
    expect((await post(`/api/api-keys/${id}/update`, { ownerEmail: null })).status).toBe(200);
    expect(changes().map((c) => [c.before, c.after])).toEqual([
      [{ ownerEmail: "(set)" }, { ownerEmail: "(set)" }],
      [{ ownerEmail: "(set)" }, { ownerEmail: null }],
    ]);
    expect(JSON.stringify(lines)).not.toContain("billing@acme.example");

    lines = [];
    const rotated = await post(`/api/api-keys/${id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(changes()).toMatchObject([
      {
        action: "rotate-api-key",
        target: id,
        before: { keyPrefix: prefix },
        after: { keyPrefix: (rotated.body.key as { keyPrefix: string }).keyPrefix },
      },
    ]);

    lines = [];
    expect((await post(`/api/api-keys/${id}/deactivate`)).status).toBe(200);
    expect(changes()).toMatchObject([
      { action: "deactivate-api-key", target: id, before: { isActive: true }, after: { isActive: false } },
    ]);

    // a refused action changed nothing and logs no change
    lines = [];
    expect((await post("/api/api-keys/00000000-0000-0000-0000-000000000000/deactivate")).status).toBe(404);
    expect(changes()).toEqual([]);
  });

  it("maintenance on then off: before and after of the switch and its message", async () => {
    expect((await post("/api/admin/maintenance", { enabled: true, message: "Upgrading storage" })).status).toBe(200);
    expect(changes()).toMatchObject([
      {
        action: "set-maintenance",
        target: "maintenance",
        before: { enabled: false },
        after: { enabled: true, message: "Upgrading storage" },
      },
    ]);
    lines = [];
    expect((await post("/api/admin/maintenance", { enabled: false })).status).toBe(200);
    expect(changes()).toMatchObject([
      {
        action: "set-maintenance",
        before: { enabled: true, message: "Upgrading storage" },
        after: { enabled: false },
      },
    ]);
  });

  it("dismissing a discovery candidate logs its status before and after", async () => {
    expect((await post("/api/discovery-candidates/aaa-unreviewed-1/dismiss")).status).toBe(200);
    expect(changes()).toMatchObject([
      {
        action: "dismiss-discovery-candidate",
        target: "aaa-unreviewed-1",
        before: { status: "active" },
        after: { status: "dismissed" },
      },
    ]);
  });
});
