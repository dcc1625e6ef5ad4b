import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createConnection, createServer } from "node:net";

/** A free TCP port on 127.0.0.1 (bound once and released). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: "127.0.0.1" });
    s.setTimeout(200, () => {
      s.destroy();
      resolve(false);
    });
    s.on("error", () => resolve(false));
    s.on("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => {
      s.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
  });
}

/**
 * A redis-server of the test's own on a free loopback port, without persistence, so fault tests can
 * pause, stop and restart it without touching the machine's shared Redis. Killed on process exit.
 */
export class OwnRedis {
  private child: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts a redis-server on a free port and waits until it answers PING. */
  static async start(): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort());
    await r.start();
    return r;
  }

  /** (Re)starts the server on the same port; resolves once it answers PING (≤ 5 s). */
  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    this.child = child;
    const kill = () => child.kill("SIGKILL");
    process.once("exit", kill);
    child.once("exit", () => {
      process.off("exit", kill);
      if (this.child === child) this.child = null;
    });
    for (let i = 0; i < 100; i++) {
      if (await ping(this.port)) return;
      if (!this.child) throw new Error(`redis-server on port ${this.port} exited at start`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on port ${this.port} did not answer PING within 5 s`);
  }

  /** Stops this server (SIGTERM, SIGKILL after 3 s) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(t);
    this.child = null;
  }
}
