import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpClient, UpstreamError } from "../../pipelines/sources/http-client.ts";

let server: Server;
let base: string;
const hits: Record<string, number> = {};
beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits[path] = (hits[path] ?? 0) + 1;
    if (path === "/flaky" && hits[path] < 3) {
      res.writeHead(503);
      res.end();
      return;
    }
    if (path === "/missing") {
      res.writeHead(404);
      res.end();
      return;
    }
    if (path === "/down") {
      res.writeHead(500);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: path }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(() => server.close());

describe("HttpClient", () => {
  it("retries 5xx with backoff, then succeeds and closes the circuit", async () => {
    const c = new HttpClient({ name: "t", baseUrl: base, retries: 3, backoffMs: 5 });
    expect(await c.getJson("/flaky")).toEqual({ ok: "/flaky" });
    expect(hits["/flaky"]).toBe(3);
    expect(c.state.state).toBe("closed");
    expect(c.state.lastSuccessAt).not.toBeNull();
  });

  it("does not retry a 4xx", async () => {
    const c = new HttpClient({ name: "t", baseUrl: base, retries: 3, backoffMs: 5 });
    await expect(c.getJson("/missing")).rejects.toMatchObject({ status: 404 });
    expect(hits["/missing"]).toBe(1);
  });

  it("opens the circuit after consecutive failures and rejects without calling upstream", async () => {
    let now = 0;
    const c = new HttpClient({
      name: "t",
      baseUrl: base,
      retries: 0,
      failureThreshold: 2,
      cooldownMs: 1000,
      now: () => now,
    });
    await expect(c.getJson("/down")).rejects.toBeInstanceOf(UpstreamError);
    await expect(c.getJson("/down")).rejects.toBeInstanceOf(UpstreamError);
    expect(c.state).toMatchObject({ state: "open", consecutiveFailures: 2 });
    const before = hits["/down"];
    await expect(c.getJson("/ok")).rejects.toThrow(/circuit open/);
    expect(hits["/down"]).toBe(before);
    now = 2000;
    expect(await c.getJson("/ok")).toEqual({ ok: "/ok" });
    expect(c.state.state).toBe("closed");
  });
});
