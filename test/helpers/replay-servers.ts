import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { readOpenDefiYieldsCsv } from "../../pipelines/sources/defillama-yields/defillama-yields.ts";
import {
  DEFILLAMA_ARCHIVE_TIME,
  readDefillamaChartCsv,
  readDefillamaPricesWideCsv,
} from "../../pipelines/sources/defillama/defillama.ts";
import { readEcbHistCsv } from "../../pipelines/sources/frankfurter/frankfurter.ts";
import { RECORDED_CAPTURES } from "../../pipelines/sources/recorded-captures.ts";
import { must } from "./must.ts";

/**
 * Local stand-ins of the upstream APIs that replay the recorded payloads of `../shared/data` over
 * HTTP on loopback, at the paths the live clients request (pipelines/sources/*: `fetchLive`). One
 * server per source (DefiLlama's paths are absolute, so each source needs its own origin):
 * - `defillama`: `GET /stablecoins?includePrices=true` (the recorded 2025-09-07 response as is),
 *   `GET /stablecoinprices` and `GET /stablecoincharts/all` (the recorded archives as the live
 *   payload, newest `newestPoints` points only, so live builds stay small);
 * - `coingecko`: `GET /api/v3/coins/markets?…` (the recorded response as is);
 * - `frankfurter`: `GET /v1/{start}..{end}?base=EUR` (the recorded ECB history within the range);
 * - `binance`: `GET /api/v3/klines?symbol=USDCUSDT&interval=1m&limit=N` (the newest recorded day,
 *   last N bars; other symbols or intervals were not recorded: 404);
 * - `defillama-yields`: `GET /pools` (the recorded head sample).
 * Not replayed (nothing recorded in their wire format): per-coin DefiLlama detail, CoinGecko market
 * charts, Curve, Bluechip, reserves, DEX subgraphs, JSON-RPC. Any other path answers 404.
 *
 * `failing[source] = status` makes that source answer `status` to every request from then on (a
 * failing upstream); delete the entry to recover. `requests` lists `<source> <path>` in order.
 */
export async function startReplayServers(captureDir: string, opts: { newestPoints?: number } = {}) {
  const n = opts.newestPoints ?? 30;
  const read = (file: string) => readFileSync(join(captureDir, file), "utf8");
  const recordedFile = (endpoint: string, match: string) =>
    must(
      RECORDED_CAPTURES.find((c) => c.endpoint === endpoint && c.file.includes(match)),
      `a recorded ${endpoint} capture matching ${match}`,
    ).file;
  const NY = DEFILLAMA_ARCHIVE_TIME.zone;
  const newest = <T>(xs: T[]) => xs.slice(-n);
  const llamaList = read(recordedFile("defillama.stablecoins", "defillama_raw_output"));
  const llamaPrices = JSON.stringify(
    newest(
      readDefillamaPricesWideCsv(NY)(read(recordedFile("defillama.stablecoinprices", "stablecoin_prices"))).captures[0]
        .payload as unknown[],
    ),
  );
  const llamaChart = JSON.stringify(
    newest(
      readDefillamaChartCsv(
        "all",
        NY,
        "Total Circulating ($)",
        "Total Circulating (Stablecoin Units)",
      )(read(recordedFile("defillama.stablecoincharts", "total_stablecoins_all_chains"))).captures[0]
        .payload as unknown[],
    ),
  );
  const geckoMarkets = read(recordedFile("coingecko.markets", "coingecko_raw_output"));
  const ecb = readEcbHistCsv(read(recordedFile("frankfurter.rates", "eurofxref"))).captures[0].payload as {
    base: string;
    rates: Record<string, unknown>;
  };
  const klineFiles = RECORDED_CAPTURES.filter((c) => c.endpoint === "binance.klines")
    .map((c) => c.file)
    .sort();
  const klines = read(must(klineFiles.at(-1), "a recorded binance.klines capture"))
    .trim()
    .split(/\r?\n/)
    .map((l) => l.split(","));
  const yields = JSON.stringify(
    readOpenDefiYieldsCsv(
      must(
        RECORDED_CAPTURES.find((c) => c.endpoint === "defillama-yields.pools"),
        "a recorded defillama-yields.pools capture",
      ).observedAt,
    )(read(recordedFile("defillama-yields.pools", "yields"))).captures[0].payload,
  );

  type Route = (url: URL) => { status: number; body: string } | null;
  const ok = (body: string) => ({ status: 200, body });
  const routes: Record<string, Route> = {
    defillama: (u) =>
      u.pathname === "/stablecoins"
        ? ok(llamaList)
        : u.pathname === "/stablecoinprices"
          ? ok(llamaPrices)
          : u.pathname === "/stablecoincharts/all"
            ? ok(llamaChart)
            : null,
    coingecko: (u) => (u.pathname === "/api/v3/coins/markets" ? ok(geckoMarkets) : null),
    frankfurter: (u) => {
      const m = /^\/v1\/(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})?$/.exec(u.pathname);
      if (!m) return null;
      const rates = Object.fromEntries(
        Object.entries(ecb.rates)
          .filter(([d]) => d >= m[1] && (!m[2] || d <= m[2]))
          .sort(([a], [b]) => a.localeCompare(b)),
      );
      return ok(JSON.stringify({ amount: 1, base: u.searchParams.get("base") ?? "EUR", rates }));
    },
    binance: (u) => {
      if (
        u.pathname !== "/api/v3/klines" ||
        u.searchParams.get("symbol") !== "USDCUSDT" ||
        u.searchParams.get("interval") !== "1m"
      )
        return null;
      return ok(JSON.stringify(klines.slice(-Number(u.searchParams.get("limit") ?? 500))));
    },
    "defillama-yields": (u) => (u.pathname === "/pools" ? ok(yields) : null),
  };

  const failing: Record<string, number> = {};
  const requests: string[] = [];
  const servers = await Promise.all(
    Object.entries(routes).map(async ([source, route]) => {
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        requests.push(`${source} ${req.url}`);
        const answer = failing[source]
          ? { status: failing[source], body: JSON.stringify({ error: "replay: failing on purpose" }) }
          : (route(new URL(req.url ?? "/", "http://replay")) ?? {
              status: 404,
              body: JSON.stringify({ error: "not recorded" }),
            });
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(answer.body);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return [source, server] as const;
    }),
  );
  const origin = (s: (typeof servers)[number][1]) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
  /** Base URL per source, as the live clients take them (CoinGecko's includes `api/v3/`). */
  const urls: Record<string, string> = Object.fromEntries(
    servers.map(([source, s]) => [source, source === "coingecko" ? `${origin(s)}api/v3/` : origin(s)]),
  );
  return {
    urls,
    failing,
    requests,
    close: () =>
      Promise.all(
        servers.map(
          ([, s]) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      ).then(() => undefined),
  };
}
