import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP forwarder on `port` to the shared Postgres (127.0.0.1:5432), so a test can make *its own*
 * connections hang without touching the shared server: `freeze()` stops forwarding in both
 * directions (bytes are held, new connections are accepted but not connected upstream), like a
 * Postgres that stopped answering; `thaw()` destroys every held connection (clients reconnect) and
 * forwards again; `close()` stops listening.
 */
export async function pgProxy(port: number): Promise<{ freeze(): void; thaw(): void; close(): Promise<void> }> {
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  let frozen = false;
  const connect = (pair: { client: Socket; upstream: Socket | null }) => {
    const upstream = createConnection({ port: 5432, host: "127.0.0.1" });
    pair.upstream = upstream;
    upstream.on("error", () => {
      pair.client.destroy();
      upstream.destroy();
    });
    upstream.on("close", () => {
      pair.client.destroy();
      pairs.delete(pair);
    });
    upstream.on("data", (d) => {
      if (!frozen) pair.client.write(d);
    });
    pair.client.on("data", (d) => {
      if (!frozen) upstream.write(d);
    });
  };
  const server: Server = createServer((client) => {
    const pair = { client, upstream: null as Socket | null };
    pairs.add(pair);
    client.on("error", () => {
      client.destroy();
      pair.upstream?.destroy();
    });
    client.on("close", () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    if (!frozen) connect(pair);
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  const destroyAll = () => {
    for (const p of pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    pairs.clear();
  };
  return {
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      destroyAll();
      frozen = false;
    },
    close: async () => {
      destroyAll();
      await new Promise((r) => server.close(r));
    },
  };
}
