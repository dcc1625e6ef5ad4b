import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { COINGECKO_EXPORT_TIME, readCoingeckoChartExportCsv } from "../../pipelines/sources/coingecko/coingecko.ts";
import { DEFILLAMA_ARCHIVE_TIME, readDefillamaChainWideCsv } from "../../pipelines/sources/defillama/defillama.ts";

/**
 * Local stand-ins of the two per-coin history endpoints, replaying recorded payloads of
 * `../shared/data` (MANIFEST.md) in the live wire format, cut to the UTC days `from`..`to`:
 * - CoinGecko `GET /api/v3/coins/usd-coin/market_chart?…` from the USDC chart export
 *   (`bhemen-crypto-insights/coingecko-usdc-usdt/usdc_history.csv`, `[ms, value]` series);
 * - DefiLlama `GET /stablecoin/2` (USDC) from the per-chain archive
 *   (`check-sked-crypto-data-resources/stablecoin_USDC_circulating_by_chain.csv`, dates epoch s).
 * Any other path answers 404. `requests` lists `<source> <path>` in order. Base URLs for
 * `BALLAST_UPSTREAM_URLS`: `coingecko` ends in `/api/v3/` (its client's paths are relative).
 */
export async function startHistoryReplay(captureDir: string, from: string, to: string) {
  const lo = Date.parse(`${from}T00:00:00Z`),
    hi = Date.parse(`${to}T00:00:00Z`);
  const inMs = (ms: number) => ms >= lo && ms <= hi;
  const read = (file: string) => readFileSync(join(captureDir, file), "utf8");
  const chart = readCoingeckoChartExportCsv(
    "usd-coin",
    COINGECKO_EXPORT_TIME.zone,
  )(read("bhemen-crypto-insights/coingecko-usdc-usdt/usdc_history.csv")).captures[0].payload as Record<
    string,
    [number, number][]
  >;
  const chartBody = JSON.stringify(
    Object.fromEntries(Object.entries(chart).map(([k, series]) => [k, series.filter((p) => inMs(p[0]))])),
  );
  const detail = readDefillamaChainWideCsv(
    "2",
    "peggedUSD",
    DEFILLAMA_ARCHIVE_TIME.zone,
  )(read("check-sked-crypto-data-resources/stablecoin_USDC_circulating_by_chain.csv")).captures[0].payload as {
    id: string;
    chainBalances: Record<string, { tokens: { date: number }[] }>;
  };
  const detailBody = JSON.stringify({
    id: detail.id,
    chainBalances: Object.fromEntries(
      Object.entries(detail.chainBalances).map(([chain, c]) => [
        chain,
        { tokens: c.tokens.filter((t) => inMs(t.date * 1000)) },
      ]),
    ),
  });
  const requests: string[] = [];
  const serve = (source: string, route: (path: string) => string | null) =>
    new Promise<{ url: string; close: () => Promise<void> }>((resolve) => {
      const server = createServer((req, res) => {
        const path = new URL(req.url ?? "/", "http://x").pathname;
        requests.push(`${source} ${path}`);
        const body = route(path);
        if (body === null) res.writeHead(404).end("not recorded");
        else res.writeHead(200, { "Content-Type": "application/json" }).end(body);
      });
      server.listen(0, "127.0.0.1", () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          close: () =>
            new Promise<void>((r) => {
              server.close(() => r());
              server.closeAllConnections();
            }),
        }),
      );
    });
  const gecko = await serve("coingecko", (p) => (p === "/api/v3/coins/usd-coin/market_chart" ? chartBody : null));
  const llama = await serve("defillama", (p) => (p === "/stablecoin/2" ? detailBody : null));
  return {
    requests,
    upstreamUrls: `coingecko=${gecko.url}/api/v3/,defillama=${llama.url}`,
    close: async () => {
      await gecko.close();
      await llama.close();
    },
  };
}
