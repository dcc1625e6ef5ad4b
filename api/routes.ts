import { z } from "zod";
import { ChainDetailPayloadSchema, ChainsPayloadSchema } from "../site-data/chains.ts";
import { DepegEventsResponseSchema, TapeEventsResponseSchema } from "../site-data/depeg-events.ts";
import { DepegResolverPayloadSchema, DepegResolverReviewPayloadSchema } from "../site-data/depeg-resolver.ts";
import { NonUsdSharePayloadSchema } from "../site-data/non-usd-share.ts";
import { PegSummaryPayloadSchema } from "../site-data/peg-summary.ts";
import { StablecoinChartsSchema } from "../site-data/stablecoin-charts.ts";
import { StablecoinDetailSchema } from "../site-data/stablecoin-detail.ts";
import { StablecoinSummariesSchema, StablecoinSummarySchema } from "../site-data/stablecoin-summary.ts";
import { StablecoinsPayloadSchema } from "../site-data/stablecoins.ts";
import { SupplyHistorySchema } from "../site-data/supply-history.ts";
import type { CacheProfile } from "./lib/freshness.ts";
import { HttpError, notYetAvailable } from "./lib/http-error.ts";
import { intParam } from "./lib/query-params.ts";
import type { PublishedDb } from "./lib/published-db.ts";
import type { PublishedStore } from "./lib/published.ts";
import { DepegEventsQuery, queryDepegEvents } from "./queries/depeg-events.ts";
import { EventsQuery, queryEvents } from "./queries/events.ts";

/**
 * What a handler returns: a JSON payload (or its serialised text), the data time (Unix s), and
 * extra `_meta` fields merged over the freshness block (a `degraded` flag also turns true when stale).
 */
export interface RouteResult {
  payload?: unknown;
  json?: string;
  dataAsOf: number | null;
  meta?: Record<string, unknown>;
}

/** Everything a handler may use. `query`/`params` are already validated by the route's schemas. */
export interface HandlerContext {
  store: PublishedStore;
  /** Read-only DuckDB over the serving build (query routes). */
  db: PublishedDb;
  query: Record<string, any>;
  params: Record<string, string>;
}

/**
 * One route, declared once: serving, validation, OpenAPI and route tests all read this object.
 * `maxAgeSec` is the freshness budget (spec 8); `meta` adds the `_meta` body block (objects only).
 */
export interface RouteDef {
  method: "GET";
  path: string;
  summary: string;
  description?: string;
  auth: "apiKey" | "public";
  cache: CacheProfile;
  maxAgeSec: number;
  /** Freshness ratios; chains uses 1x/2x (spec 3.2). */
  ratios?: { fresh: number; degraded: number };
  meta: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  response: z.ZodType;
  handler(ctx: HandlerContext): Promise<RouteResult>;
}

const StablecoinIdParam = z.object({ stablecoinId: z.string().describe("Canonical stablecoin id `<ticker>-<issuer>`") });

/** Reads and validates a published payload; 503 when never published or invalid, `undefined` never escapes. */
async function required<T>(store: PublishedStore, path: string, schema: z.ZodType<T>, what: string): Promise<T> {
  try {
    const v = await store.payload(path, (x) => schema.parse(x));
    if (v === undefined) throw notYetAvailable(what);
    return v;
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw notYetAvailable(what);
  }
}

async function dataAsOf(store: PublishedStore, path: string): Promise<number | null> {
  return (await store.build())?.files.get(path)?.dataAsOf ?? null;
}

/** Raw JSON text of a published file after a schema check at first read; 404/503 per `missing`. */
async function passthrough(store: PublishedStore, path: string, schema: z.ZodType, missing: () => HttpError): Promise<RouteResult> {
  const build = await store.build();
  if (!build) throw notYetAvailable("no published build");
  const file = build.files.get(path);
  if (!file) throw missing();
  const json = await store.memo(`text:${path}`, async () => {
    await required(store, path, schema, path);
    return Buffer.from((await store.file(path))!).toString("utf8").trimEnd();
  });
  return { json, dataAsOf: file.dataAsOf };
}

/**
 * Resolver payloads: `_meta` carries schemaVersion, dataAsOf, modelAsOf and `degraded`; a missing or
 * unreadable snapshot is 200 with `degraded: true` and empty rows (spec 4.1), never invented rows.
 */
async function resolverSnapshot(store: PublishedStore, path: string, schema: z.ZodType, empty: unknown): Promise<RouteResult> {
  const build = await store.build();
  const file = build?.files.get(path);
  let payload: unknown = empty;
  let degraded = true;
  if (file) {
    try {
      payload = await store.payload(path, (x) => schema.parse(x));
      degraded = payload === undefined;
      payload ??= empty;
    } catch { /* unreadable: degraded, empty */ }
  }
  return {
    payload, dataAsOf: file?.dataAsOf ?? null,
    meta: { schemaVersion: file?.schemaVersion ?? null, dataAsOf: file?.dataAsOf ?? null, modelAsOf: build?.manifest.asOf ?? null, degraded },
  };
}

/** Every public read route. */
export const ROUTES: RouteDef[] = [
  {
    method: "GET", path: "/api/stablecoins", summary: "All listed stablecoins", auth: "apiKey", cache: "producer-backed", maxAgeSec: 600, meta: true,
    description: "StablecoinData rows (spec 2.2), largest USD supply first. `circulating*` are USD keyed by pegType; `chainCirculating` is keyed by DefiLlama chain display label. Captures observed before 2025-12-01 carry native peg units upstream and are converted with the coin's price, else the ECB reference rate (`fxFallbackRates`), else par for USD pegs.",
    response: StablecoinsPayloadSchema,
    handler: ({ store }) => passthrough(store, "site-data/stablecoins.json", StablecoinsPayloadSchema, () => notYetAvailable("stablecoins")),
  },
  {
    method: "GET", path: "/api/stablecoin/:stablecoinId", summary: "Daily supply history of one stablecoin", auth: "apiKey", cache: "per-coin", maxAgeSec: 600, meta: false,
    description: "TokenPoint history (spec 2.3). USD-pegged coins report USD at face value; non-USD pegs keep native units native and convert USD with the current price.",
    params: StablecoinIdParam, response: StablecoinDetailSchema,
    handler: ({ store, params }) => passthrough(store, `site-data/stablecoin/${params.stablecoinId}.json`, StablecoinDetailSchema, () => new HttpError(404, `Unknown stablecoin id: ${params.stablecoinId}`)),
  },
  {
    method: "GET", path: "/api/stablecoin-summary/:stablecoinId", summary: "Supply summary of one stablecoin", auth: "apiKey", cache: "producer-backed", maxAgeSec: 600, meta: false,
    description: "Summary (spec 2.4). `supplyUsd.change1d/7d/30d` are USD differences (current − previous), null unless both values were observed. 503 when the shared summary cache is missing or corrupt, 404 when the coin is absent from it.",
    params: StablecoinIdParam, response: StablecoinSummarySchema,
    async handler({ store, params }) {
      const path = "site-data/stablecoin-summary.json";
      const all = await required(store, path, StablecoinSummariesSchema, "stablecoin summaries");
      const summary = Object.hasOwn(all, params.stablecoinId) ? all[params.stablecoinId] : undefined;
      if (!summary) throw new HttpError(404, `Unknown stablecoin id: ${params.stablecoinId}`);
      const json = await store.memo(`summary:${params.stablecoinId}`, () => JSON.stringify(summary));
      return { json, dataAsOf: await dataAsOf(store, path) };
    },
  },
  {
    method: "GET", path: "/api/stablecoin-charts", summary: "Aggregate supply over time", auth: "apiKey", cache: "standard", maxAgeSec: 3600, meta: false,
    description: "Top-level array (spec 2.3). `aggregateUniverse` `defillama-all` points (2020-12 → 2023-07) carry only the all-peg `total`; `ballast-listed` points carry one key per pegType plus `total`.",
    response: StablecoinChartsSchema,
    handler: ({ store }) => passthrough(store, "site-data/stablecoin-charts.json", StablecoinChartsSchema, () => notYetAvailable("stablecoin-charts")),
  },
  {
    method: "GET", path: "/api/supply-history", summary: "Daily supply history of one stablecoin", auth: "apiKey", cache: "slow", maxAgeSec: 86400, meta: false,
    description: "Array of `{date, circulatingUsd, circulatingNative, source}` oldest first; `days` keeps the last N days before the newest point (default: all).",
    query: z.object({ stablecoin: z.string().describe("Canonical stablecoin id"), days: intParam(1, 3650).optional() }),
    response: SupplyHistorySchema,
    async handler({ store, query }) {
      const build = await store.build();
      if (!build) throw notYetAvailable("no published build");
      const path = `site-data/supply-history/${query.stablecoin}.json`;
      if (!build.files.has(path)) {
        if (build.files.has(`site-data/stablecoin/${query.stablecoin}.json`)) return { payload: [], dataAsOf: await dataAsOf(store, path) };
        throw new HttpError(404, `Unknown stablecoin id: ${query.stablecoin}`);
      }
      const points = await required(store, path, SupplyHistorySchema, "supply-history");
      const last = points.at(-1)?.date ?? 0;
      const payload = query.days ? points.filter((p) => p.date > last - query.days * 86400) : points;
      return { payload, dataAsOf: await dataAsOf(store, path) };
    },
  },
  {
    method: "GET", path: "/api/chains", summary: "Chain aggregates, or one chain's coins", auth: "apiKey", cache: "producer-backed", maxAgeSec: 1800, ratios: { fresh: 1, degraded: 2 }, meta: true,
    description: "Without `chain`: one row per chain (USD supply now and 1/7/30 days ago, dominance share, coin HHI). With `chain` (registry chain id, e.g. `ethereum`): the chain row and its coins. Chain health scores need safety grades, which are not yet published: `healthScore` and `healthBand` are null until then.",
    query: z.object({ chain: z.string().regex(/^[a-z0-9-]+$/, "must be a registry chain id").optional() }),
    response: z.union([ChainsPayloadSchema, ChainDetailPayloadSchema]),
    handler: ({ store, query }) => query.chain
      ? passthrough(store, `site-data/chains/${query.chain}.json`, ChainDetailPayloadSchema, () => new HttpError(404, `Unknown chain: ${query.chain}`))
      : passthrough(store, "site-data/chains.json", ChainsPayloadSchema, () => notYetAvailable("chains")),
  },
  {
    method: "GET", path: "/api/non-usd-share", summary: "Share of non-USD peg groups", auth: "apiKey", cache: "slow", maxAgeSec: 86400, meta: false,
    description: "`current` and `history` of commodity and non-USD fiat shares (percent, 4 dp) of listed supply on days where the whole listed universe was observed. `days` (30-5000, default 5000) bounds the history.",
    query: z.object({ days: intParam(30, 5000).optional() }),
    response: NonUsdSharePayloadSchema,
    async handler({ store, query }) {
      const path = "site-data/non-usd-share.json";
      const p = await required(store, path, NonUsdSharePayloadSchema, "non-usd-share");
      const days = query.days ?? 5000;
      const last = p.history.at(-1)?.date ?? 0;
      return { payload: { current: p.current, history: p.history.filter((h) => h.date > last - days * 86400) }, dataAsOf: await dataAsOf(store, path) };
    },
  },
  {
    method: "GET", path: "/api/peg-summary", summary: "Peg scores and the aggregate peg picture", auth: "apiKey", cache: "producer-backed", maxAgeSec: 900, meta: true,
    description: "Per-coin peg score (0-100, `ballast-peg-score-v2`: time at peg and incident severity over 4 years, minus active and spread penalties; null with `pegScoreUnavailableReason` for NAV tokens, floating pegs, coins without a price or with fewer than 30 priced days), current deviation with its reference evidence (`par`, `fx`, `median` of ≥ 3 same-peg coins, or `fx-fallback` when ECB data is stale: not judged, confidence low), 90-day metrics; `summary` aggregates.",
    response: PegSummaryPayloadSchema,
    handler: ({ store }) => passthrough(store, "site-data/peg-summary.json", PegSummaryPayloadSchema, () => notYetAvailable("peg-summary")),
  },
  {
    method: "GET", path: "/api/depeg-events", summary: "Depeg incidents, newest first", auth: "apiKey", cache: "producer-backed", maxAgeSec: 900, meta: false,
    description: "DepegEvent rows (spec 2.6) from a read-only query over the published build, ordered by `startedAt` desc then `id` desc. Page with `nextCursor` (keyset; stable under inserts) or `offset`. Raw threshold crossings linked within 6 h are one incident (`constituentEventCount`); its `id` is the first row's id, deterministic across rebuilds. Detection: 15-minute consensus grid, ≥ 100 bps (USD) / ≥ 150 bps (other pegs); large-cap (≥ $1B), low-confidence and extreme (≥ 5000 bps) moves wait as `pending` for a second independent source (`confirmationSources`).",
    query: DepegEventsQuery, response: DepegEventsResponseSchema,
    async handler({ store, db, query }) {
      const build = await store.build();
      if (!build) throw notYetAvailable("no published build");
      return { payload: await queryDepegEvents(db, query as z.output<typeof DepegEventsQuery>, build.manifest.asOf), dataAsOf: build.files.get("ballast.duckdb")?.dataAsOf ?? null };
    },
  },
  {
    method: "GET", path: "/api/events", summary: "Chronological tape of typed events", auth: "apiKey", cache: "realtime", maxAgeSec: 600, meta: true,
    description: "Typed events newest first (`ts` desc, `id` desc): `depeg.started`, `depeg.recovered`, `depeg.closed` (class `depeg`); freeze and score events join as those features land. Filters combine with AND; lists are comma-separated; `since`/`until` are Unix seconds.",
    query: EventsQuery, response: TapeEventsResponseSchema,
    async handler({ store, db, query }) {
      const build = await store.build();
      if (!build) throw notYetAvailable("no published build");
      return { payload: await queryEvents(db, query as z.output<typeof EventsQuery>), dataAsOf: build.files.get("ballast.duckdb")?.dataAsOf ?? null };
    },
  },
  {
    method: "GET", path: "/api/depeg-resolver", summary: "Depeg duration resolver rows", auth: "apiKey", cache: "standard", maxAgeSec: 900, meta: true,
    description: "One row per canonical incident (spec 2.7/3.1): readiness score `readiness-72h-v1` (lock strictly above 0.75, backstop 72 h after start), lock_deferred when inputs are stale, closed_pre_lock when recovered first, no_call without signal. `publication_retry_pending` and `invalidated` never occur here: builds publish atomically and no erratum source exists yet. Stale or missing snapshot: 200 with `_meta.degraded` true and empty rows.",
    response: DepegResolverPayloadSchema,
    handler: ({ store }) => resolverSnapshot(store, "site-data/depeg-resolver.json", DepegResolverPayloadSchema, { rows: [] }),
  },
  {
    method: "GET", path: "/api/depeg-resolver-review", summary: "Resolver predictions reviewed against outcomes", auth: "apiKey", cache: "standard", maxAgeSec: 900, meta: true,
    description: "Sealed predictions of ended incidents against what happened: recovery-likelihood accuracy (likelihood ≥ 0.5 vs recovered) and Brier score, observed − predicted duration (s).",
    response: DepegResolverReviewPayloadSchema,
    handler: ({ store }) => resolverSnapshot(store, "site-data/depeg-resolver-review.json", DepegResolverReviewPayloadSchema, { summary: null, outcomes: [] }),
  },
];
