import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** The project-made Bluechip fixture: slug → status and JSON body (or a raw text body). */
export const BLUECHIP_FIXTURE: Record<string, { status: number; body?: unknown; raw?: string }> = Object.fromEntries(
  Object.entries(
    JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/bluechip/coin-data.json"), "utf8")) as Record<
      string,
      unknown
    >,
  ).filter(([k]) => !k.startsWith("_")) as [string, { status: number; body?: unknown; raw?: string }][],
);

/**
 * A local `node:http` stand-in for `backend.bluechip.org`: `GET /coin-data/{slug}` answers the
 * fixture's status and body; `/coin-data/slow` answers after `slowMs`; unknown slugs 404.
 * `url` ends with `/` (a base URL for the HTTP client); `requests` lists the paths asked for.
 */
export async function startBluechipServer(opts: { slowMs?: number } = {}) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const slug = /^\/coin-data\/([^/?]+)$/.exec(req.url ?? "")?.[1];
    if (slug === "slow") {
      const t = setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(BLUECHIP_FIXTURE.usdc.body));
      }, opts.slowMs ?? 2000);
      res.on("close", () => clearTimeout(t));
      return;
    }
    const entry = slug ? BLUECHIP_FIXTURE[slug] : undefined;
    if (!entry) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ errors: [{ message: "Route not found" }] }));
      return;
    }
    res.writeHead(entry.status, { "content-type": entry.raw !== undefined ? "text/html" : "application/json" });
    res.end(entry.raw ?? JSON.stringify(entry.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
