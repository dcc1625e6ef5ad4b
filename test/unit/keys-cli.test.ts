/** The key CLI (scripts/keys.ts) as a subprocess against a temp schema on the real Postgres. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { freePort } from "../helpers/redis-server.ts";

const PEPPER = "pepper-for-cli-tests-0123456789";
const REPO = join(import.meta.dirname, "../..");
const TOKEN = /bl_live_([0-9a-f]{16})_([A-Za-z0-9_-]{32})/;

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let URL = "";
let sql: SqlClient;
let keys: KeyStore;

/** Runs `tsx scripts/keys.ts ...args`; resolves with exit code and output. */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/keys.ts", ...args], {
      cwd: REPO, env: { ...process.env, DATABASE_URL: URL, API_KEY_PEPPER: PEPPER, BALLAST_LOG: "silent", ...env }, stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => { stdout += d; });
    child.stderr.on("data", (d) => { stderr += d; });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  schema = await createTestSchema("ballast_keys_cli");
  URL = schema.url;
  sql = await openSqlClient({ databaseUrl: URL, pgliteDir: "" });
  keys = new KeyStore(sql, PEPPER);
});
afterAll(async () => {
  await sql?.close();
  await schema?.drop();
});

describe("scripts/keys.ts", () => {
  it("create → list → rotate → deactivate, never listing a secret", async () => {
    const created = await cli(["create", "--name", "Partner A", "--limit", "77", "--owner", "Ops@Example.com"]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const token = TOKEN.exec(created.stdout)![0];
    expect(token).toMatch(/^bl_live_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/);
    const [, prefix, secret] = TOKEN.exec(token)!;
    const id = /id ([0-9a-f-]{36})/.exec(created.stdout)![1];
    expect(await keys.verify(token, Math.floor(Date.now() / 1000))).toMatchObject({ id, name: "Partner A", tier: "standard", rateLimitPerMinute: 77, isActive: true });

    const listed = await cli(["list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split("\n")[0]).toMatch(/^id\s+prefix\s+name\s+tier\s+limit\s+active\s+expires$/);
    const row = listed.stdout.split("\n").find((l) => l.startsWith(id))!;
    expect(row).toMatch(new RegExp(`^${id}\\s+bl_live_${prefix}_…\\s+Partner A\\s+standard\\s+77\\s+yes\\s+never$`));
    expect(listed.stdout).not.toContain(secret);
    const { rows } = await sql.query<{ secret_hash: string }>("select secret_hash from api_keys");
    for (const r of rows) expect(listed.stdout).not.toContain(r.secret_hash);

    const rotated = await cli(["rotate", id]);
    expect(rotated.code).toBe(0);
    const next = TOKEN.exec(rotated.stdout)![0];
    expect(next).not.toBe(token);
    expect(TOKEN.exec(next)![1]).not.toBe(prefix);
    const now = Math.floor(Date.now() / 1000);
    expect(await keys.verify(token, now)).toBeNull();
    expect(await keys.verify(next, now)).toMatchObject({ id, rateLimitPerMinute: 77 });
    expect((await keys.list()).find((k) => k.id === id)).toMatchObject({ keyPrefix: TOKEN.exec(next)![1], maskedToken: `bl_live_${TOKEN.exec(next)![1]}_…` });

    const deactivated = await cli(["deactivate", id]);
    expect(deactivated.code).toBe(0);
    expect(await keys.verify(next, now)).toBeNull();
    expect((await keys.list()).find((k) => k.id === id)).toMatchObject({ isActive: false });
    const again = await cli(["rotate", id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no active key with id/);
  });

  it("rejects limits outside 1–10000, unknown tiers and unknown ids with exit 1 and a clear message", async () => {
    const limits = ["0", "10001", "abc"];
    const [l0, l1, l2, tier, unknown, usage] = await Promise.all([
      ...limits.map((limit) => cli(["create", "--name", "bad", "--limit", limit])),
      cli(["create", "--name", "bad", "--tier", "self-serve"]),
      cli(["deactivate", "00000000-0000-0000-0000-000000000000"]),
      cli(["create"]),
    ]);
    for (const [i, r] of [l0, l1, l2].entries()) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`Invalid rate limit "${limits[i]}": expected an integer from 1 to 10000`));
      expect(r.stdout).not.toMatch(TOKEN);
    }
    expect(tier.code).toBe(1);
    expect(tier.stderr).toMatch(/Invalid tier "self-serve": expected one of standard, donor/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no key with id/);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/create needs --name/);
    const { rows } = await sql.query<{ n: number }>("select count(*)::int as n from api_keys where name = 'bad'");
    expect(rows[0].n).toBe(0);
  });

  it("exits 1 with a state-store message when Postgres is unreachable", async () => {
    const r = await cli(["list"], { DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/test` });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: state store: list failed: .*ECONNREFUSED/);
  });
});
