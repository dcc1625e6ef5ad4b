/**
 * Issue 31 item 5: the descriptions a server hands a newcomer (OpenAPI `servers`, the `/docs` page, the
 * Postman collection and environment) point at that server's own origin, not at the `make run` default
 * port 8787: `http://<HOST>:<listening port>`, or PUBLIC_BASE_URL when configured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningOrigin, startServer } from "../../api/server.ts";
import { publishFakeBuild } from "../helpers/ops.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

type Running = Awaited<ReturnType<typeof startServer>>;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let dir = "";
const servers: Running[] = [];

async function start(extra: { PUBLIC_BASE_URL?: string } = {}): Promise<Running> {
  const server = await startServer({
    PORT: 0,
    HOST: "127.0.0.1",
    BALLAST_DATA_DIR: dir,
    CLOCK: "wall",
    DATABASE_URL: schema.url,
    API_KEY_PEPPER: "pepper-for-served-origin-tests-01",
    ...extra,
  });
  servers.push(server);
  return server;
}

/** The three origins a newcomer copies: OpenAPI servers[0], Postman environment and collection `baseUrl`. */
async function describedOrigins(port: number) {
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    expect(res.status, path).toBe(200);
    return res.json();
  };
  const openapi = (await get("/openapi.json")) as { servers: { url: string }[] };
  const env = (await get("/postman/ballast.postman_environment.json")) as { values: { key: string; value: string }[] };
  const col = (await get("/postman/ballast.postman_collection.json")) as { variable: { key: string; value: string }[] };
  return {
    openapi: openapi.servers.map((s) => s.url),
    environment: env.values.find((v) => v.key === "baseUrl")?.value,
    collection: col.variable.find((v) => v.key === "baseUrl")?.value,
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ballast-served-origin-"));
  publishFakeBuild(dir, "served-origin-build", []);
  schema = await createTestSchema("ballast_served_origin");
}, 60_000);
afterAll(async () => {
  for (const s of servers) await s.close();
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("served descriptions point at the serving origin", () => {
  it("a server on a port other than 8787: OpenAPI, Postman and /docs name http://127.0.0.1:<port>", async () => {
    const server = await start();
    expect(server.port).not.toBe(8787);
    const origin = `http://127.0.0.1:${server.port}`;
    expect(await describedOrigins(server.port)).toEqual({ openapi: [origin], environment: origin, collection: origin });
    const docs = await fetch(`${origin}/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain(origin);
    expect(html).not.toContain("127.0.0.1:8787");
  }, 60_000);

  it("PUBLIC_BASE_URL (trailing slash dropped) wins over the listening address", async () => {
    const server = await start({ PUBLIC_BASE_URL: "https://api.ballast.example/" });
    const origin = "https://api.ballast.example";
    expect(await describedOrigins(server.port)).toEqual({ openapi: [origin], environment: origin, collection: origin });
  }, 60_000);

  it("a wildcard listening host is described as loopback; an IPv6 host is bracketed", () => {
    expect(listeningOrigin("0.0.0.0", 9000)).toBe("http://127.0.0.1:9000");
    expect(listeningOrigin("::", 9000)).toBe("http://127.0.0.1:9000");
    expect(listeningOrigin("::1", 9000)).toBe("http://[::1]:9000");
    expect(listeningOrigin("localhost", 9000)).toBe("http://localhost:9000");
  });
});
