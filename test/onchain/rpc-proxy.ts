import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP JSON-RPC proxy in front of anvil that misbehaves on purpose, like real providers do:
 * range limits on eth_getLogs, malformed or slow answers for wide ranges, ignored topic filters,
 * failing methods. Every eth_getLogs range it sees is recorded.
 */
export interface ProxyMode {
  /** eth_getLogs over more than this many blocks → JSON-RPC error (cycling through real providers' messages). */
  maxRange?: number;
  /** eth_getLogs over more than this many blocks → a result that is not a log list. */
  malformedAbove?: number;
  /** eth_getLogs over more than this many blocks → answered after `slowMs` ms. */
  slowAbove?: number;
  slowMs?: number;
  /** Drop the `topics` filter of eth_getLogs (the provider returns every log of the address). */
  ignoreTopics?: boolean;
  /** Methods answered with a JSON-RPC internal error. */
  failMethods?: string[];
}

/** The range-limit answers of real providers (code, message). */
export const RANGE_ERRORS = [
  { code: -32005, message: "query returned more than 10000 results" },
  { code: -32602, message: "eth_getLogs block range too large, range: 26, max: 4" },
  { code: -32000, message: "Log response size exceeded. You can make eth_getLogs requests with up to a 4 block range" },
  { code: -32600, message: "limit exceeded" },
];

/** A running proxy: its URL, its (mutable) mode, what it saw, and `close()`. */
export interface RpcProxy {
  url: string;
  mode: ProxyMode;
  /** eth_getLogs ranges received, [from, to] inclusive, and whether they were answered normally. */
  ranges: { from: number; to: number; served: boolean }[];
  /** Requests per method. */
  calls: Map<string, number>;
  close(): Promise<void>;
}

/** Starts the proxy on a free loopback port, forwarding to `upstream`. `mode` can be changed while running. */
export async function startRpcProxy(upstream: string, mode: ProxyMode = {}): Promise<RpcProxy> {
  const ranges: RpcProxy["ranges"] = [];
  const calls = new Map<string, number>();
  let rangeErr = 0;
  const proxy = { mode } as RpcProxy;
  const handle = async (req: {
    jsonrpc: string;
    id: unknown;
    method: string;
    params?: unknown[];
  }): Promise<unknown> => {
    const m = proxy.mode;
    calls.set(req.method, (calls.get(req.method) ?? 0) + 1);
    if (m.failMethods?.includes(req.method))
      return { jsonrpc: "2.0", id: req.id, error: { code: -32603, message: "internal error" } };
    let body = req;
    let span = 0;
    if (req.method === "eth_getLogs") {
      const f = { ...(req.params?.[0] as Record<string, unknown>) };
      const from = Number(f.fromBlock),
        to = Number(f.toBlock);
      span = to - from + 1;
      const entry = { from, to, served: false };
      ranges.push(entry);
      if (m.maxRange !== undefined && span > m.maxRange) {
        const e = RANGE_ERRORS[rangeErr++ % RANGE_ERRORS.length];
        return { jsonrpc: "2.0", id: req.id, error: e };
      }
      if (m.malformedAbove !== undefined && span > m.malformedAbove)
        return { jsonrpc: "2.0", id: req.id, result: { truncated: true } };
      if (m.slowAbove !== undefined && span > m.slowAbove) await new Promise((r) => setTimeout(r, m.slowMs ?? 2000));
      if (m.ignoreTopics) delete f.topics;
      body = { ...req, params: [f] };
      entry.served = true;
    }
    const res = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return res.json();
  };
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => {
      raw += d;
    });
    req.on("end", async () => {
      try {
        const parsed = JSON.parse(raw);
        const out = Array.isArray(parsed) ? await Promise.all(parsed.map(handle)) : await handle(parsed);
        if (res.destroyed) return;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(out));
      } catch (err) {
        if (!res.destroyed) {
          res.writeHead(500);
          res.end(String(err));
        }
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    ranges,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
  return proxy;
}
