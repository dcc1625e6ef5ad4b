import { type ChildProcessByStdio, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../api/lib/jobs.ts";
import { processRuns } from "../../lib/processes.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

// Issue 30 item 2: a server killed (kill -9) or stopped during an operator job leaves no lie behind:
// its job child stops with it, and the next server reads the job `interrupted`, also on an
// Idempotency-Key replay. The servers are real child processes started like `api/server.ts`; the job is
// the real `backfill-mint-burn` child, held in flight by an RPC endpoint that accepts and never answers.

const TOKEN_ID = "svc-token-id-crash-0001";
const TOKEN_SECRET = "svc-token-secret-crash-0123456789";
const SVC = { "CF-Access-Client-Id": TOKEN_ID, "CF-Access-Client-Secret": TOKEN_SECRET };
const CONFIG_KEY = "usdc-circle:ethereum:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48:erc20-supply";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let dir: string;
let rpc: Server;
const held = new Set<Socket>();
const servers = new Set<ChildProcessByStdio<null, Readable, Readable>>();

beforeAll(async () => {
  schema = await createTestSchema("ballast_crash");
  dir = mkdtempSync(join(tmpdir(), "ballast-crash-"));
  rpc = createServer((s) => {
    held.add(s); // never answered: the job waits on it (the RPC timeout below is 10 min)
    s.on("close", () => held.delete(s));
  });
  await new Promise<void>((r) => rpc.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  for (const s of servers) s.kill("SIGKILL");
  for (const s of held) s.destroy();
  await new Promise<void>((r) => rpc?.close(() => r()));
  await schema?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A server process as `make run` starts it (`node --import tsx api/server.ts`), and its two ports once listening. */
async function startServerProcess() {
  const child = spawn(process.execPath, ["--import", "tsx", "api/server.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      BALLAST_LOG: "silent",
      PORT: "0",
      HOST: "127.0.0.1",
      BALLAST_DATA_DIR: dir,
      DATABASE_URL: schema.url,
      API_KEY_PEPPER: "pepper-for-tests-0123456789",
      STATUS_RECORD_INTERVAL_SEC: "0",
      OPS_PORT: "0",
      OPS_HOST: "127.0.0.1",
      OPS_SERVICE_TOKEN_ID: TOKEN_ID,
      OPS_SERVICE_TOKEN_SECRET: TOKEN_SECRET,
      OPS_JOB_WAIT_MS: "0",
      BALLAST_ONCHAIN_LEDGER: join(dir, "onchain.duckdb"),
      BALLAST_RPC_ETHEREUM: `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`,
      BALLAST_RPC_TIMEOUT_MS: "600000",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  servers.add(child);
  child.on("exit", () => servers.delete(child));
  let out = "",
    err = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const opsPort = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const ops = /Operator lane on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (ops && /Listening on /.test(out)) resolve(Number(ops[1]));
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${err}`)));
  });
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  return { child, opsPort, exited };
}

/** Pids of the job children of server `pid`: its child processes running `build/onchain-cli.ts` (Linux /proc). */
function jobChildrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === pid && readFileSync(`/proc/${name}/cmdline`, "utf8").includes("build/onchain-cli.ts"))
        out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const backfill = (opsPort: number, key: string) =>
  fetch(
    `http://127.0.0.1:${opsPort}/api/backfill-mint-burn?configKey=${encodeURIComponent(CONFIG_KEY)}&fromBlock=1&toBlock=100`,
    { method: "POST", headers: { ...SVC, "X-Ballast-Admin": "1", "Idempotency-Key": key } },
  );
const job = async (opsPort: number, requestId: string) =>
  (await (await fetch(`http://127.0.0.1:${opsPort}/api/admin/jobs/${requestId}`, { headers: SVC })).json()) as {
    status: string;
    error: string | null;
  };

/** Starts the job on a fresh server and waits until it runs in its child; the server, request id and child pid. */
async function jobInFlight(key: string) {
  const server = await startServerProcess();
  const started = await backfill(server.opsPort, key);
  expect(started.status).toBe(202);
  const { requestId } = (await started.json()) as { requestId: string };
  await expect.poll(async () => (await job(server.opsPort, requestId)).status, { timeout: 120_000 }).toBe("running");
  await expect.poll(() => jobChildrenOf(server.child.pid ?? -1).length, { timeout: 120_000 }).toBe(1);
  const [jobPid] = jobChildrenOf(server.child.pid ?? -1);
  return { server, requestId, jobPid };
}

describe("an operator job whose server dies", () => {
  it("kill -9: the job child stops with the server; the next server reads the job interrupted, also on a replay", async () => {
    const { server, requestId, jobPid } = await jobInFlight("crash-kill-1");
    server.child.kill("SIGKILL");
    await server.exited;
    // The child notices its parent is gone (parent guard, every 0.5 s) and stops its process group.
    await expect.poll(() => processRuns(jobPid), { timeout: 30_000 }).toBe(false);

    const next = await startServerProcess();
    const after = await job(next.opsPort, requestId);
    expect(after.status).toBe("interrupted");
    expect(after.error).toMatch(/^interrupted: the server running it \(pid \d+ on .+\) stopped before it finished/);
    const replay = await backfill(next.opsPort, "crash-kill-1");
    expect([replay.status, replay.headers.get("X-Idempotent-Replay")]).toEqual([202, "true"]);
    expect(await replay.json()).toMatchObject({ requestId, status: "interrupted" });
    next.child.kill("SIGKILL");
    await next.exited;
  });

  it("SIGTERM: the server stops the job's process group on its way out and records the job interrupted", async () => {
    const { server, requestId, jobPid } = await jobInFlight("crash-term-1");
    server.child.kill("SIGTERM");
    await server.exited;
    await expect.poll(() => processRuns(jobPid), { timeout: 30_000 }).toBe(false);
    const next = await startServerProcess();
    expect(await job(next.opsPort, requestId)).toMatchObject({
      status: "interrupted",
      error: expect.stringMatching(/^interrupted: the server stopped while it ran/),
    });
    next.child.kill("SIGKILL");
    await next.exited;
  });
});
