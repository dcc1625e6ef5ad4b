/**
 * The key CLI (scripts/keys.ts) as a subprocess: against a temp schema on the real Postgres (also
 * while an API server on that schema runs), and against the embedded store while a server owns it
 * (through its admin socket), after it stopped (direct), and refusing when the owner cannot be reached.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { must } from "../helpers/must.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedStoreBusyError } from "../../api/lib/embedded-store.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { type RunningServer, startServer } from "../../api/server.ts";
import { freePort } from "../helpers/redis-server.ts";

const PEPPER = "pepper-for-cli-tests-0123456789";
const REPO = join(import.meta.dirname, "../..");
const TOKEN = /bl_live_([0-9a-f]{16})_([A-Za-z0-9_-]{32})/;
/** Group `group` of the first match of `re` in `text`; fails the test, quoting `text`, when `re` does not match. */
const matched = (re: RegExp, text: string, group = 0): string =>
  must(re.exec(text), `a match of ${re} in ${JSON.stringify(text)}`)[group];

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let URL = "";
let sql: SqlClient;
let keys: KeyStore;

/** Runs `tsx scripts/keys.ts ...args`; resolves with exit code and output. An `undefined` env value unsets it. */
function cli(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const merged: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: URL,
    API_KEY_PEPPER: PEPPER,
    BALLAST_LOG: "silent",
    ...env,
  };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/keys.ts", ...args], {
      cwd: REPO,
      env: merged as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
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
    const token = matched(TOKEN, created.stdout);
    expect(token).toMatch(/^bl_live_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/);
    const [, prefix, secret] = must(TOKEN.exec(token), "the parts of the created token");
    const id = matched(/id ([0-9a-f-]{36})/, created.stdout, 1);
    expect(await keys.verify(token, Math.floor(Date.now() / 1000))).toMatchObject({
      id,
      name: "Partner A",
      tier: "standard",
      rateLimitPerMinute: 77,
      isActive: true,
    });

    const listed = await cli(["list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split("\n")[0]).toMatch(/^id\s+prefix\s+name\s+tier\s+limit\s+active\s+expires$/);
    const row = must(
      listed.stdout.split("\n").find((l) => l.startsWith(id)),
      `the listed row of ${id}`,
    );
    expect(row).toMatch(new RegExp(`^${id}\\s+bl_live_${prefix}_…\\s+Partner A\\s+standard\\s+77\\s+yes\\s+never$`));
    expect(listed.stdout).not.toContain(secret);
    const { rows } = await sql.query<{ secret_hash: string }>("select secret_hash from api_keys");
    for (const r of rows) expect(listed.stdout).not.toContain(r.secret_hash);

    const rotated = await cli(["rotate", id]);
    expect(rotated.code).toBe(0);
    const next = matched(TOKEN, rotated.stdout);
    expect(next).not.toBe(token);
    expect(matched(TOKEN, next, 1)).not.toBe(prefix);
    const now = Math.floor(Date.now() / 1000);
    expect(await keys.verify(token, now)).toBeNull();
    expect(await keys.verify(next, now)).toMatchObject({ id, rateLimitPerMinute: 77 });
    expect((await keys.list()).find((k) => k.id === id)).toMatchObject({
      keyPrefix: matched(TOKEN, next, 1),
      maskedToken: `bl_live_${matched(TOKEN, next, 1)}_…`,
    });

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

/** An auth probe on a running server: an unknown API path answers 404 with a valid key and 401 without (spec 5.2). */
const probe = async (srv: RunningServer, token: string) =>
  (await fetch(`http://127.0.0.1:${srv.port}/api/key-probe`, { headers: { "X-API-Key": token } })).status;
const idOf = (out: string) => matched(/id ([0-9a-f-]{36})/, out, 1);
const tokenOf = (out: string) => matched(TOKEN, out);

describe("scripts/keys.ts while a server on the same Postgres runs", () => {
  it("a key it creates works at once; one it deactivates or rotates away answers 401 at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-cli-pg-"));
    const srv = await startServer({
      PORT: 0,
      HOST: "127.0.0.1",
      BALLAST_DATA_DIR: dir,
      CLOCK: "wall",
      DATABASE_URL: URL,
      API_KEY_PEPPER: PEPPER,
      STATUS_RECORD_INTERVAL_SEC: 0,
    });
    try {
      const created = await cli(["create", "--name", "live"]);
      expect(created.code).toBe(0);
      const token = tokenOf(created.stdout);
      const id = idOf(created.stdout);
      expect(await probe(srv, token)).toBe(404);
      expect(await probe(srv, token)).toBe(404); // now cached by the server
      const rotated = await cli(["rotate", id]);
      expect(rotated.code).toBe(0);
      expect(await probe(srv, token)).toBe(401);
      const next = tokenOf(rotated.stdout);
      expect(await probe(srv, next)).toBe(404);
      expect(await probe(srv, next)).toBe(404);
      const off = await cli(["deactivate", id]);
      expect(off.code).toBe(0);
      expect(off.stdout).toMatch(/answers 401 on every running instance/);
      expect(await probe(srv, next)).toBe(401);
      const upd = await cli(["update", id, "--active", "yes", "--limit", "1"]);
      expect(upd.code).toBe(0);
      expect([await probe(srv, next), await probe(srv, next)]).toEqual([404, 429]);
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("scripts/keys.ts with the embedded store (PGlite, one process may open it)", () => {
  const embedded = (dir: string) => ({ DATABASE_URL: undefined, API_KEY_PEPPER: undefined, BALLAST_DATA_DIR: dir });

  it("goes through the running server: changes apply at once, and nothing is lost once the server stops", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-cli-embedded-"));
    const srv = await startServer({
      PORT: 0,
      HOST: "127.0.0.1",
      BALLAST_DATA_DIR: dir,
      CLOCK: "wall",
      STATUS_RECORD_INTERVAL_SEC: 0,
    });
    let closed = false;
    try {
      expect(srv.adminSocket).toBe(join(dir, "state", "admin.sock"));
      expect(statSync(must(srv.adminSocket, "the admin socket path")).mode & 0o777).toBe(0o600);
      const created = await cli(["create", "--name", "embedded", "--limit", "500"], embedded(dir));
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(new RegExp(`through the running API server, pid ${process.pid}`));
      const token = tokenOf(created.stdout);
      const id = idOf(created.stdout);
      expect(await probe(srv, token)).toBe(404); // works at once
      expect(await probe(srv, token)).toBe(404);
      const other = await cli(["create", "--name", "to-rotate"], embedded(dir));
      const otherToken = tokenOf(other.stdout);
      expect(await probe(srv, otherToken)).toBe(404);
      const rotated = await cli(["rotate", idOf(other.stdout)], embedded(dir));
      expect(rotated.code).toBe(0);
      expect(await probe(srv, otherToken)).toBe(401);
      expect(await probe(srv, tokenOf(rotated.stdout))).toBe(404);
      const off = await cli(["deactivate", id], embedded(dir));
      expect(off.code).toBe(0);
      expect(await probe(srv, token)).toBe(401); // at once
      const bad = await cli(["update", id, "--tier", "self-serve"], embedded(dir));
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/Invalid tier "self-serve"/);
      const missing = await cli(["deactivate", "00000000-0000-0000-0000-000000000000"], embedded(dir));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/no key with id/);
      await srv.close();
      closed = true;
      // The server stopped: the CLI opens the store itself and finds every change.
      const listed = await cli(["list"], embedded(dir));
      expect(listed.code).toBe(0);
      expect(listed.stdout).not.toMatch(/through the running API server/);
      const row = (name: string) =>
        must(
          listed.stdout.split("\n").find((l) => l.includes(name)),
          `the listed row of ${name}`,
        );
      expect(row("embedded")).toMatch(/\s500\s+no\s/);
      expect(row("to-rotate")).toMatch(new RegExp(`bl_live_${matched(TOKEN, rotated.stdout, 1)}_…`));
      expect(listed.stdout).toMatch(/2 key\(s\)/);
    } finally {
      if (!closed) await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses clearly when the owner cannot be reached, and a second server refuses to start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ballast-cli-owned-"));
    try {
      const owner = (role: string) =>
        writeFileSync(
          join(dir, "state", "owner.json"),
          JSON.stringify({
            pid: process.ppid,
            role,
            socket: role === "server" ? join(dir, "state", "gone.sock") : null,
            startedAt: Date.now(),
          }),
        );
      mkdirSync(join(dir, "state"), { recursive: true });
      owner("server");
      const r = await cli(["create", "--name", "x"], embedded(dir));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^Error: the API server \\(pid ${process.ppid}\\) owns the embedded state store, but the admin socket .*gone\\.sock does not answer .*; stop it, or use DATABASE_URL`,
        ),
      );
      expect(r.stdout).not.toMatch(TOKEN);
      await expect(
        startServer({ PORT: 0, HOST: "127.0.0.1", BALLAST_DATA_DIR: dir, CLOCK: "wall" }),
      ).rejects.toBeInstanceOf(EmbeddedStoreBusyError);
      owner("cli");
      const busy = await cli(["list"], embedded(dir));
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(
        new RegExp(`another keys.ts process \\(pid ${process.ppid}\\) has the embedded state store .* open`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
