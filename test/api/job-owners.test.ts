import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentOwner, JobRunner } from "../../api/lib/jobs.ts";
import { openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

// Issue 30 item 2: which stored jobs a starting runner marks `interrupted`: those whose owner is
// provably gone (a dead pid on this host, or its pid now held by a later process), and those of owners
// it cannot see (another host, no owner stored) once older than the longest run; never a live owner's.
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: SqlClient;
beforeAll(async () => {
  schema = await createTestSchema("ballast_job_owners");
  sql = await openSqlClient({ databaseUrl: schema.url, pgliteDir: "", queryTimeoutMs: 5000 });
});
afterAll(async () => {
  await sql?.close();
  await schema?.drop();
});

const NOW = 1_800_000_000;
const dead = spawnSync(process.execPath, ["-e", "0"]).pid ?? -1; // exited and reaped
const me = currentOwner();

describe("start-up sweep of orphaned jobs", () => {
  it("interrupts the jobs of gone owners only, and a read tells why", async () => {
    const first = new JobRunner(sql, { executor: async () => ({ exitCode: 0, stdout: "", stderr: "" }) });
    await first.close(); // creates the table
    const rows: [string, string, string | null, number | null, string | null, number][] = [
      ["00000000-0000-4000-8000-000000000001", "running", hostname(), dead, "1", NOW - 60],
      ["00000000-0000-4000-8000-000000000002", "queued", hostname(), dead, "1", NOW - 60],
      ["00000000-0000-4000-8000-000000000003", "running", me.host, me.pid, me.token, NOW - 60],
      ["00000000-0000-4000-8000-000000000004", "running", me.host, me.pid, `${me.token}-earlier`, NOW - 60],
      ["00000000-0000-4000-8000-000000000005", "running", "another-host", 4242, "9", NOW - 60],
      ["00000000-0000-4000-8000-000000000006", "running", "another-host", 4242, "9", NOW - 7 * 3600],
      ["00000000-0000-4000-8000-000000000007", "running", null, null, null, NOW - 7 * 3600],
      ["00000000-0000-4000-8000-000000000008", "succeeded", hostname(), dead, "1", NOW - 60],
    ];
    for (const [id, status, host, pid, token, created] of rows)
      await sql.query(
        `insert into admin_jobs (request_id, action, status, params, created_at, started_at, owner_host, owner_pid, owner_token)
         values ($1, 'backfill-mint-burn', $2, 'null', $3, $3, $4, $5, $6)`,
        [id, status, created, host, pid, token],
      );
    const runner = new JobRunner(sql, { nowMs: () => NOW * 1000 });
    try {
      const status = async (n: number) => (await runner.get(rows[n - 1][0]))?.status;
      expect(await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(status))).toEqual([
        "interrupted", // dead pid on this host
        "interrupted", // queued, same
        "running", // this very process
        "interrupted", // this pid, but a later process (pid reused, e.g. pid 1 of a restarted container)
        "running", // another host, within the longest run (6 h): it may still run there
        "interrupted", // another host, older than the longest run: its runner killed it by now
        "interrupted", // no owner stored (an earlier version), older than the longest run
        "succeeded",
      ]);
      expect((await runner.get(rows[0][0]))?.error).toMatch(
        new RegExp(`^interrupted: the server running it \\(pid ${dead} on ${hostname()}\\) stopped`),
      );
      expect((await runner.get(rows[0][0]))?.finishedAt).toBe(NOW);
      expect(await runner.interruptOrphans()).toBe(0); // the start-up sweep left none behind
    } finally {
      await runner.close();
    }
  });
});
