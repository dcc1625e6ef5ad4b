import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import type { SqlClient } from "./key-store.ts";
import { apiLog, errorMessage } from "./log.ts";
import { schemaOnce } from "./sql-schema.ts";
import { dropOldest } from "./bounded-map.ts";
import { processRuns, processStartToken } from "../../lib/processes.ts";

/**
 * Background jobs of the operator lane. A job is one run of an existing pipeline CLI in a child
 * process (`build/cli.ts`, `build/onchain-cli.ts`): the API may not import `build/` or `pipelines/`,
 * a build must not stall the API's event loop, and the on-chain ledger (DuckDB) allows one writing
 * process at a time. Jobs of one lock group (`ledger`, `build`) run one after another in this
 * process. Every job has a `requestId`; its state is kept in memory and in the state store
 * (`admin_jobs`), so `GET /api/admin/jobs/:requestId` answers on any instance sharing the store.
 *
 * Exit codes follow the CLIs: 0 succeeded (stdout: the JSON result, else its text as `output`),
 * 2 rejected (bad input, HTTP 400 class; stdout `{ error }`), anything else failed.
 *
 * Crashes: a child runs in its own process group, which this process stops (SIGTERM) when a job is
 * stopped or this process exits; a child whose parent dies anyway (kill -9) stops its group itself
 * (./parent-guard.ts). Every stored job names its owner (host, pid, process start token); a runner
 * starting up marks the queued or running jobs of owners that are gone `interrupted` (so do reads of
 * such a job), so no job reads `running` after its server died.
 */

/** What a job runs: a repository script with its arguments. */
export interface JobCommand {
  /** Path relative to the repository root, e.g. `build/onchain-cli.ts`. */
  script: string;
  args: string[];
}

/** How a child process ended. `exitCode` null when it was killed. */
export interface JobOutcome {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one command to completion (tests inject their own). */
export type JobExecutor = (cmd: JobCommand, signal: AbortSignal) => Promise<JobOutcome>;

/**
 * Lifecycle of a job. `interrupted`: the server running it stopped (shut down, or killed and found
 * gone by the next start) before it finished; its child was stopped with it. Run it again (a snapshot
 * backfill resumes after its last published day).
 */
export type JobStatus = "queued" | "running" | "succeeded" | "rejected" | "failed" | "interrupted";

/** A job as `GET /api/admin/jobs/:requestId` reports it. Times Unix s. */
export interface JobRecord {
  requestId: string;
  action: string;
  status: JobStatus;
  params: unknown;
  /** Parsed JSON stdout of a succeeded job (or `{ output }` for text). */
  result: unknown;
  /** Why it was rejected or failed. */
  error: string | null;
  exitCode: number | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** Options of {@link JobRunner}. */
export interface JobRunnerOptions {
  executor?: JobExecutor;
  /** Environment of the child processes (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** A job still running after this long is killed (ms); default 6 h. */
  maxRunMs?: number;
  nowMs?: () => number;
}

const SCHEMA = `
create table if not exists admin_jobs (
  request_id text primary key,
  action text not null,
  status text not null,
  params text,
  result text,
  error text,
  exit_code integer,
  created_at bigint not null,
  started_at bigint,
  finished_at bigint,
  owner_host text,
  owner_pid integer,
  owner_token text
)`;
/** Owner columns on a table created before jobs had owners. */
const OWNER_COLUMNS =
  "alter table admin_jobs add column if not exists owner_host text, add column if not exists owner_pid integer, add column if not exists owner_token text";

/** A row of `admin_jobs` as the driver returns it: JSON columns as text, bigints possibly as strings. */
interface JobRow {
  request_id: string;
  action: string;
  status: JobStatus;
  params: string | null;
  result: string | null;
  error: string | null;
  exit_code: number | string | null;
  created_at: number | string;
  started_at: number | string | null;
  finished_at: number | string | null;
  owner_host: string | null;
  owner_pid: number | string | null;
  owner_token: string | null;
}

/** The process running a job: host name, pid and start token (processStartToken; null when unknown). */
export interface JobOwner {
  host: string;
  pid: number;
  token: string | null;
}

/** This process as a job owner. */
export function currentOwner(): JobOwner {
  return { host: hostname(), pid: process.pid, token: processStartToken(process.pid) };
}

/**
 * Whether the owner of a queued or running job is gone: true when it ran on this host and its pid no
 * longer runs or now belongs to a later process (another start token); false when it still runs;
 * null when that cannot be told from here (another host, or a row stored before jobs had owners).
 */
export function ownerGone(owner: Partial<JobOwner> | null): boolean | null {
  if (!owner?.host || !owner.pid || owner.host !== hostname()) return null;
  if (!processRuns(owner.pid)) return true;
  const now = processStartToken(owner.pid);
  return owner.token != null && now !== null && now !== owner.token;
}

/** Rows of finished jobs are kept this long (s). */
export const JOB_TTL_SEC = 7 * 86_400;
/** Bytes of a child's stdout/stderr kept (the tail): room for a whole JSON result (a reclassify batch lists up to ~2000 changed rows). */
const OUTPUT_MAX = 4 * 1024 * 1024;

/** Repository root (the API runs scripts by path; it never imports them). */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Guard module every job child loads: it stops its process group when this process dies (./parent-guard.ts). */
const PARENT_GUARD = new URL("./parent-guard.ts", import.meta.url).href;

/** Process groups (pids of their leaders) of the running job children; stopped when this process exits. */
const childGroups = new Set<number>();

/** SIGTERM to the process group of `pid` (the child and whatever it started); ignores a group already gone. */
function stopGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    // already gone
  }
}

let exitHookInstalled = false;
/** Stops every job child's group when this process exits (normally or by process.exit). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pid of childGroups) stopGroup(pid);
  });
}

/**
 * Default executor: `node --import tsx --import <parent guard> <script> <args>` in the repository
 * root, in a process group of its own (stopped whole: on abort, and when this process exits), with
 * `BALLAST_PARENT_PID` set so the child stops its group if this process dies; output captured (tails).
 */
export function childProcessExecutor(env: NodeJS.ProcessEnv = process.env): JobExecutor {
  installExitHook();
  return (cmd, signal) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", "--import", PARENT_GUARD, cmd.script, ...cmd.args], {
        cwd: REPO_ROOT,
        env: { ...env, BALLAST_PARENT_PID: String(process.pid) },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      const pid = child.pid;
      const abort = () => {
        if (pid !== undefined) stopGroup(pid);
      };
      if (pid !== undefined) childGroups.add(pid);
      if (signal.aborted) abort();
      else signal.addEventListener("abort", abort, { once: true });
      let stdout = "",
        stderr = "";
      const tail = (s: string) => (s.length > OUTPUT_MAX ? s.slice(-OUTPUT_MAX) : s);
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout = tail(stdout + d);
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr = tail(stderr + d);
      });
      let settled = false;
      const finish = (exitCode: number | null) => {
        if (!settled) {
          settled = true;
          if (pid !== undefined) childGroups.delete(pid);
          signal.removeEventListener("abort", abort);
          resolve({ exitCode, stdout, stderr });
        }
      };
      child.on("error", (err) => {
        stderr += `\n${errorMessage(err)}`;
        if (child.pid === undefined) finish(null); // never started (no `close` follows)
      });
      child.on("close", (code) => finish(code));
    });
}

/** Interprets a CLI outcome: status, result and error. */
export function interpretOutcome(o: JobOutcome): Pick<JobRecord, "status" | "result" | "error" | "exitCode"> {
  const text = o.stdout.trim();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = undefined;
  }
  const lastErrLine = o.stderr.trim().split("\n").filter(Boolean).at(-1) ?? null;
  const errorOf = () => {
    const e = (parsed as { error?: unknown } | null | undefined)?.error;
    return typeof e === "string"
      ? e
      : (lastErrLine ?? (o.exitCode === null ? "job was stopped" : `exit code ${o.exitCode}`));
  };
  if (o.exitCode === 0)
    return { status: "succeeded", result: parsed === undefined ? { output: text } : parsed, error: null, exitCode: 0 };
  if (o.exitCode === 2) return { status: "rejected", result: null, error: errorOf(), exitCode: 2 };
  return {
    status: "failed",
    result: parsed === undefined || parsed === null ? null : parsed,
    error: errorOf(),
    exitCode: o.exitCode,
  };
}

/** Starts, tracks and reports background jobs (see the module comment). */
export class JobRunner {
  private readonly executor: JobExecutor;
  private readonly running = new Map<string, { record: JobRecord; done: Promise<JobRecord>; abort: AbortController }>();
  private readonly finished = new Map<string, JobRecord>();
  private readonly groups = new Map<string, Promise<unknown>>();
  private readonly ensureSchema: () => Promise<void>;
  private readonly nowMs: () => number;
  private readonly owner = currentOwner();
  /** The start-up sweep of jobs whose owner is gone (interruptOrphans); reads wait for it. */
  private readonly swept: Promise<number>;
  private closed = false;

  /** Starts the sweep of orphaned jobs in the state store at once (interruptOrphans; a failure is logged). */
  constructor(
    private readonly sql: SqlClient | null,
    private readonly opts: JobRunnerOptions = {},
  ) {
    this.executor = opts.executor ?? childProcessExecutor(opts.env);
    this.nowMs = opts.nowMs ?? Date.now;
    if (sql) {
      const table = schemaOnce(sql, SCHEMA),
        owners = schemaOnce(sql, OWNER_COLUMNS);
      this.ensureSchema = () => table().then(owners);
    } else this.ensureSchema = async () => undefined;
    this.swept = this.interruptOrphans().catch((err: unknown) => {
      apiLog("warn", "ops", "orphaned jobs not checked", { error: errorMessage(err) });
      return 0;
    });
  }

  /** The longest a job may run (ms): past it the runner that owns it has killed it. */
  private get maxRunMs(): number {
    return this.opts.maxRunMs ?? 6 * 3600_000;
  }

  /**
   * Marks `interrupted` every queued or running job in the state store whose owner is gone (ownerGone:
   * a dead or reused pid on this host), or, when that cannot be told (another host, no owner stored),
   * that was created longer than the maximum run time ago. Returns how many.
   */
  async interruptOrphans(): Promise<number> {
    if (!this.sql) return 0;
    await this.ensureSchema();
    const { rows } = await this.sql.query<JobRow>("select * from admin_jobs where status in ('queued', 'running')");
    let n = 0;
    for (const r of rows) if (await this.interruptIfOrphaned(r)) n += 1;
    if (n > 0) apiLog("warn", "ops", "jobs of a stopped server marked interrupted", { jobs: n });
    return n;
  }

  /** Marks the stored job `r` interrupted when it is queued or running and its owner is gone; returns whether it did. */
  private async interruptIfOrphaned(r: JobRow): Promise<boolean> {
    if (!this.sql || (r.status !== "queued" && r.status !== "running")) return false;
    const owner = { host: r.owner_host ?? undefined, pid: Number(r.owner_pid) || undefined, token: r.owner_token };
    const gone = ownerGone(owner) ?? this.nowSec() - Number(r.created_at) > this.maxRunMs / 1000;
    if (!gone) return false;
    const error = `interrupted: the server running it (${owner.host ? `pid ${owner.pid} on ${owner.host}` : "an earlier version"}) stopped before it finished; its child process was stopped with it. Run it again with a new Idempotency-Key (a snapshot backfill resumes after its last published day).`;
    const { rows } = await this.sql.query(
      `update admin_jobs set status = 'interrupted', error = $2, finished_at = $3
       where request_id = $1 and status in ('queued', 'running') returning request_id`,
      [r.request_id, error, this.nowSec()],
    );
    apiLog("warn", "ops", "job interrupted: its server is gone", { requestId: r.request_id, action: r.action });
    return rows.length > 0;
  }

  private nowSec(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  private async persist(r: JobRecord): Promise<void> {
    if (!this.sql) return;
    const sql = this.sql;
    try {
      await this.ensureSchema();
      await sql.query(
        `insert into admin_jobs (request_id, action, status, params, result, error, exit_code, created_at, started_at, finished_at,
           owner_host, owner_pid, owner_token)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         on conflict (request_id) do update set status = excluded.status, result = excluded.result, error = excluded.error,
           exit_code = excluded.exit_code, started_at = excluded.started_at, finished_at = excluded.finished_at`,
        [
          r.requestId,
          r.action,
          r.status,
          JSON.stringify(r.params ?? null),
          r.result === undefined ? null : JSON.stringify(r.result),
          r.error,
          r.exitCode,
          r.createdAt,
          r.startedAt,
          r.finishedAt,
          this.owner.host,
          this.owner.pid,
          this.owner.token,
        ],
      );
      if (r.finishedAt !== null)
        await sql.query("delete from admin_jobs where finished_at < $1", [this.nowSec() - JOB_TTL_SEC]);
    } catch (err) {
      apiLog("warn", "ops", "job state not stored (kept in this process)", {
        requestId: r.requestId,
        action: r.action,
        error: errorMessage(err),
      });
    }
  }

  /**
   * Starts `cmd` as job `action` (after the jobs of the same `group` started before it) and returns
   * its record (status `queued` or `running`) and a promise of the finished record.
   */
  start(
    action: string,
    cmd: JobCommand,
    params: unknown,
    group: string,
  ): { record: JobRecord; done: Promise<JobRecord> } {
    if (this.closed) throw new Error("job runner closed");
    const record: JobRecord = {
      requestId: randomUUID(),
      action,
      status: "queued",
      params,
      result: null,
      error: null,
      exitCode: null,
      createdAt: this.nowSec(),
      startedAt: null,
      finishedAt: null,
    };
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.maxRunMs);
    timer.unref();
    const previous = this.groups.get(group) ?? Promise.resolve();
    const done = (async () => {
      await this.persist(record);
      await previous.catch(() => undefined);
      if (abort.signal.aborted) {
        Object.assign(record, {
          status: "failed",
          error: "job was stopped before it started",
          finishedAt: this.nowSec(),
        });
      } else {
        Object.assign(record, { status: "running", startedAt: this.nowSec() });
        await this.persist(record);
        apiLog("info", "ops", "job started", { requestId: record.requestId, action, script: cmd.script });
        let outcome: JobOutcome;
        try {
          outcome = await this.executor(cmd, abort.signal);
        } catch (err) {
          outcome = { exitCode: null, stdout: "", stderr: errorMessage(err) };
        }
        Object.assign(
          record,
          this.closed && outcome.exitCode === null
            ? {
                status: "interrupted",
                result: null,
                error:
                  "interrupted: the server stopped while it ran (its child process was stopped with it); run it again with a new Idempotency-Key",
                exitCode: null,
              }
            : interpretOutcome(outcome),
          { finishedAt: this.nowSec() },
        );
      }
      clearTimeout(timer);
      apiLog(record.status === "succeeded" ? "info" : "warn", "ops", "job finished", {
        requestId: record.requestId,
        action,
        status: record.status,
        error: record.error,
      });
      await this.persist(record);
      this.running.delete(record.requestId);
      this.finished.set(record.requestId, record);
      if (this.finished.size > 500) dropOldest(this.finished);
      return record;
    })();
    this.groups.set(group, done);
    this.running.set(record.requestId, { record, done, abort });
    return { record, done };
  }

  /** The finished record when `done` settles within `ms`, else null (still queued or running). */
  async waitBriefly(done: Promise<JobRecord>, ms: number): Promise<JobRecord | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((r) => {
      timer = setTimeout(() => r(null), ms);
    });
    try {
      return await Promise.race([done, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A job by request id: this process's copy first, else the state store's (a queued or running one
   * whose owner is gone is marked `interrupted` first); null when unknown.
   */
  async get(requestId: string): Promise<JobRecord | null> {
    const local = this.running.get(requestId)?.record ?? this.finished.get(requestId);
    if (local) return { ...local };
    if (!this.sql) return null;
    await this.swept;
    await this.ensureSchema();
    const sql = this.sql;
    const select = async () =>
      (await sql.query<JobRow>("select * from admin_jobs where request_id = $1", [requestId])).rows[0];
    let r = await select();
    if (r && (await this.interruptIfOrphaned(r))) r = await select();
    if (!r) return null;
    const json = (s: string | null) => (s === null ? null : JSON.parse(s));
    const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    return {
      requestId: r.request_id,
      action: r.action,
      status: r.status,
      params: json(r.params),
      result: json(r.result),
      error: r.error,
      exitCode: n(r.exit_code),
      createdAt: Number(r.created_at),
      startedAt: n(r.started_at),
      finishedAt: n(r.finished_at),
    };
  }

  /** Stops every job of this process (children get SIGTERM) and waits for their records. */
  async close(): Promise<void> {
    this.closed = true;
    await this.swept;
    const all = [...this.running.values()];
    for (const j of all) j.abort.abort();
    await Promise.allSettled(all.map((j) => j.done));
  }
}
