import { gzipSync } from "node:zlib";
import { bluechipSlugs } from "../pipelines/sources/bluechip/bluechip.ts";
import { ENDPOINTS, liveCapturePlan, SOURCE_BASE_URLS } from "../pipelines/sources/endpoints.ts";
import { EvmRpc, rpcEnvName } from "../pipelines/sources/evm-rpc.ts";
import { HttpClient, type HttpClientOptions } from "../pipelines/sources/http-client.ts";
import { loadRegistry } from "../pipelines/registry/registry.ts";
import type { BuildConfig } from "./config.ts";
import { log } from "./log.ts";
import type { Sink } from "./sinks/sink.ts";

/**
 * Live capture: calls every endpoint of the plan through its source's client and writes each
 * payload, validated against the endpoint's payload schema, to
 * `raw/<source>/<YYYY-MM-DD>/<capture-id>.json.gz`. A failing call is logged and skipped (the
 * build then uses the newest earlier capture and reports staleness). Endpoints read over JSON-RPC
 * (`fetchRpc`: the USDS status) use `opts.rpc`, else providers from `BALLAST_RPC_<CHAIN>`, and are
 * skipped (logged) when their chain has none. Circuit states of the HTTP sources are written
 * to `raw/_circuits.json`. Returns the keys written.
 *
 * Base URL of a source: `opts.baseUrls`, else `BALLAST_UPSTREAM_URLS` (`source=url,…`), else
 * `BALLAST_BLUECHIP_URL` for bluechip, else SOURCE_BASE_URLS. The scheduler passes `clients` (kept
 * across its runs, so circuit breakers carry over), `clientOptions` (timeouts, retries, breaker) and
 * `onError` (each failed call, for its run log).
 */
export async function runCapture(
  config: BuildConfig,
  sink: Sink,
  opts: {
    baseUrls?: Record<string, string>;
    now?: () => number;
    plan?: { endpoint: string; params: Record<string, string> }[];
    rpc?: EvmRpc;
    env?: NodeJS.ProcessEnv;
    clients?: Map<string, HttpClient>;
    clientOptions?: Partial<Omit<HttpClientOptions, "name" | "baseUrl">>;
    onError?: (failure: { endpoint: string; params: Record<string, string>; message: string }) => void;
  } = {},
): Promise<string[]> {
  const registry = loadRegistry();
  const clients = opts.clients ?? new Map<string, HttpClient>();
  // Base URLs set by config (a trailing slash keeps relative paths under a mirror's prefix).
  const configured: Record<string, string> = { bluechip: config.BALLAST_BLUECHIP_URL.replace(/\/?$/, "/") };
  const overrides = parseUpstreamUrls(config.BALLAST_UPSTREAM_URLS);
  const clientFor = (source: string) => {
    let client = clients.get(source);
    if (!client) {
      client = new HttpClient({
        concurrency: source === "coingecko" ? 1 : source === "bluechip" ? 2 : 4,
        ...opts.clientOptions,
        name: source,
        baseUrl: opts.baseUrls?.[source] ?? overrides[source] ?? configured[source] ?? SOURCE_BASE_URLS[source],
        headers:
          source === "coingecko" && config.COINGECKO_API_KEY
            ? { "x-cg-demo-api-key": config.COINGECKO_API_KEY }
            : undefined,
      });
      clients.set(source, client);
    }
    return client;
  };
  // JSON-RPC reads (USDS status): providers from `BALLAST_RPC_<CHAIN>`, built once when first needed.
  let rpc: EvmRpc | null | undefined = opts.rpc;
  const rpcClient = (): EvmRpc | null => {
    if (rpc === undefined) {
      try {
        rpc = EvmRpc.fromEnv(opts.env ?? process.env);
      } catch (err) {
        log("warn", "capture", `JSON-RPC reads skipped: ${(err as Error).message}`);
        rpc = null;
      }
    }
    return rpc;
  };
  const now = opts.now ?? Date.now;
  const plan =
    opts.plan ??
    liveCapturePlan({
      detailLlamaIds: registry.coins.flatMap((c) => (c.llamaId && c.deadFrom === null ? [c.llamaId] : [])).slice(0, 50),
      chartGeckoIds: [],
      fxStart: new Date(now() - 400 * 86400_000).toISOString().slice(0, 10),
      bluechipSlugs: bluechipSlugs(config.BALLAST_BLUECHIP_SLUGS),
    });
  const written: string[] = [];
  await Promise.all(
    plan.map(async (step) => {
      const ep = ENDPOINTS[step.endpoint];
      if (!ep.fetchLive && !ep.fetchRpc) return;
      try {
        let payload: unknown;
        if (ep.fetchRpc) {
          const client = rpcClient();
          if (!client?.hasChain(ep.fetchRpc.chain)) {
            log("info", "capture", `${step.endpoint} skipped: no ${rpcEnvName(ep.fetchRpc.chain)} provider configured`);
            return;
          }
          payload = await ep.fetchRpc.fetch(client, step.params);
        } else {
          if (!ep.fetchLive) return; // not reached: endpoints without a fetcher were skipped above
          payload = await ep.fetchLive(clientFor(ep.source), step.params);
        }
        const check = ep.payloadSchema.safeParse(payload);
        if (!check.success) throw new Error(`payload failed schema at ${check.error.issues[0]?.path.join(".")}`);
        const observedAt = Math.floor(now() / 1000);
        const day = new Date(observedAt * 1000).toISOString().slice(0, 10);
        const id = `${step.endpoint}${Object.entries(step.params)
          .map(([k, v]) => `-${k}-${v}`)
          .join("")}-${observedAt}`.replace(/[^A-Za-z0-9._-]/g, "_");
        const key = `raw/${ep.source}/${day}/${id}.json.gz`;
        await sink.put(
          key,
          gzipSync(JSON.stringify({ endpoint: step.endpoint, params: step.params, observedAt, payload })),
        );
        written.push(key);
      } catch (err) {
        log("warn", "capture", `${step.endpoint} failed: ${(err as Error).message}`, { params: step.params });
        opts.onError?.({ endpoint: step.endpoint, params: step.params, message: (err as Error).message });
      }
    }),
  );
  const circuits = Object.fromEntries([...clients.entries()].sort().map(([k, c]) => [k, c.state]));
  await sink.put("raw/_circuits.json", JSON.stringify(circuits));
  return written.sort();
}

/**
 * `BALLAST_UPSTREAM_URLS` (`defillama=http://127.0.0.1:9001,coingecko=http://…/api/v3/`) → source →
 * base URL. Throws naming the entry when one is not `source=url`.
 */
export function parseUpstreamUrls(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of (text ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf("=");
    const source = entry.slice(0, eq).trim(),
      url = entry.slice(eq + 1).trim();
    if (eq <= 0 || !/^https?:\/\//.test(url))
      throw new Error(`BALLAST_UPSTREAM_URLS: entry "${entry}" is not source=http(s)://url`);
    out[source] = url;
  }
  return out;
}
