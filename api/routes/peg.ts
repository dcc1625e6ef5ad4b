import type { z } from "zod";
import {
  type DepegLedger,
  DepegEventsResponseSchema,
  depegLedgerArtifact,
  type TapeLedger,
  TapeEventsResponseSchema,
  tapeLedgerArtifact,
} from "../../site-data/depeg-events.ts";
import { depegResolverArtifact, depegResolverReviewArtifact } from "../../site-data/depeg-resolver.ts";
import { pegSummaryArtifact } from "../../site-data/peg-summary.ts";
import { DepegEventsQuery, queryDepegEvents } from "../queries/depeg-events.ts";
import { EventsQuery, queryEvents } from "../queries/events.ts";
import {
  artifactOf,
  bind,
  type HandlerContext,
  type JsonRoute,
  ledgerPage,
  need,
  type RouteDecl,
  type RouteResult,
} from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag("peg", "Peg monitoring: peg scores, depeg incidents, the events tape, the duration resolver.");

/**
 * Resolver payloads: `_meta` carries schemaVersion, dataAsOf, modelAsOf and `degraded`. A missing,
 * unreadable or stale snapshot is 200 with `degraded: true` and empty rows (spec 4.1), never rows
 * the freshness rule calls stale: the app judges staleness with the route's budget and then serves
 * `whenStale` (the empty payload) with `degraded` true.
 */
async function resolverSnapshot(ctx: HandlerContext, route: JsonRoute, empty: unknown): Promise<RouteResult> {
  const build = need(ctx.build);
  const path = artifactOf(route).output.path;
  const file = build.files.get(path);
  let payload: unknown;
  if (file) {
    try {
      payload = await build.payload(path, (x) => artifactOf(route).output.schema.parse(x));
    } catch {
      /* unreadable: degraded, empty */
    }
  }
  return {
    payload: payload ?? empty,
    whenStale: empty,
    dataAsOf: file?.dataAsOf ?? null,
    meta: {
      schemaVersion: file?.schemaVersion ?? null,
      dataAsOf: file?.dataAsOf ?? null,
      modelAsOf: build.manifest.asOf,
      degraded: payload === undefined,
    },
  };
}

/** Peg monitoring: peg summary, depeg incidents, the events tape, the duration resolver and its review. */
export const PEG_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getPegSummary",
    method: "GET",
    path: "/api/peg-summary",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    meta: true,
    artifact: bind(pegSummaryArtifact),
    summary: "Peg scores and the aggregate peg picture",
    description:
      "Per-coin peg score (0-100, `ballast-peg-score-v3`: time at peg and incident severity over 4 years, minus active and spread penalties; null with `pegScoreUnavailableReason` for NAV tokens, floating pegs, coins without a price or with fewer than 30 priced days), current deviation with its reference evidence (`par`, `fx`, `median` of ≥ 3 same-peg coins, or `fx-fallback` when ECB data is stale: not judged, its `priceConfidence` stays the consensus label), 90-day metrics; `summary` aggregates.",
  },
  {
    kind: "json",
    operationId: "listDepegEvents",
    method: "GET",
    path: "/api/depeg-events",
    lane: "apiKey",
    tag,
    cache: "producer-backed",
    meta: false,
    artifact: bind(depegLedgerArtifact),
    query: DepegEventsQuery,
    response: DepegEventsResponseSchema,
    summary: "Depeg incidents, newest first",
    description:
      "DepegEvent rows (spec 2.6) over the build's published depeg ledger, ordered by `startedAt` desc then `id` desc. Page with `nextCursor` (keyset; stable under inserts) or `offset`. Raw threshold crossings linked within 6 h are one incident (`constituentEventCount`); its `id` is the first row's id, deterministic across rebuilds. Detection: 15-minute consensus grid, ≥ 100 bps (USD) / ≥ 150 bps (other pegs); large-cap (≥ $1B), low-confidence and extreme (≥ 5000 bps) moves wait as `pending` for a second independent source (`confirmationSources`). An unknown or non-canonical `stablecoin` (e.g. `USDC`) is 404.",
    handler: (ctx, route) =>
      ledgerPage<DepegLedger>(route, ctx, (l) =>
        queryDepegEvents(l, need(ctx.build).manifest.asOf, ctx.query as z.output<typeof DepegEventsQuery>),
      ),
  },
  {
    kind: "json",
    operationId: "listEvents",
    method: "GET",
    path: "/api/events",
    lane: "apiKey",
    tag,
    cache: "realtime",
    meta: true,
    artifact: bind(tapeLedgerArtifact),
    query: EventsQuery,
    response: TapeEventsResponseSchema,
    summary: "Chronological tape of typed events",
    description:
      "Typed events newest first (`ts` desc, `id` desc): `depeg.started`, `depeg.recovered`, `depeg.closed` (class `depeg`); `freeze.blacklist`, `freeze.unblacklist`, `freeze.destroy` (class `freeze`, with `chain`; a destroy is `warning`, `critical` from $10M; a freeze `warning` from $1M); `score.upgrade`, `score.downgrade`, `score.rated`, `score.unrated` (class `score`: safety grade changes of `ballast-safety-score-v2`, one per coin and UTC day; a downgrade is `warning`, `critical` into D or F; id `score-<stablecoinId>-<day Unix s>`). Filters combine with AND; lists are comma-separated; `since`/`until` are Unix seconds.",
    handler: (ctx, route) =>
      ledgerPage<TapeLedger>(route, ctx, (l) => queryEvents(l, ctx.query as z.output<typeof EventsQuery>)),
  },
  {
    kind: "json",
    operationId: "getDepegResolver",
    method: "GET",
    path: "/api/depeg-resolver",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: true,
    artifact: bind(depegResolverArtifact),
    summary: "Depeg duration resolver rows",
    description:
      "One row per canonical incident (spec 2.7/3.1): readiness score `readiness-72h-v1` (lock strictly above 0.75, backstop 72 h after start), lock_deferred when inputs are stale, closed_pre_lock when recovered first, no_call without signal. `publication_retry_pending` and `invalidated` never occur here: builds publish atomically and no erratum source exists yet. A stale (past 12x the 900 s budget) or missing snapshot: 200 with `_meta.degraded` true and empty rows.",
    handler: (ctx, route) => resolverSnapshot(ctx, route, { rows: [] }),
  },
  {
    kind: "json",
    operationId: "getDepegResolverReview",
    method: "GET",
    path: "/api/depeg-resolver-review",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: true,
    artifact: bind(depegResolverReviewArtifact),
    summary: "Resolver predictions reviewed against outcomes",
    description:
      "Sealed predictions of ended incidents against what happened: recovery-likelihood accuracy (likelihood ≥ 0.5 vs recovered) and Brier score, observed − predicted duration (s). Stale or missing snapshot: 200 with `_meta.degraded` true and an empty review.",
    handler: (ctx, route) => resolverSnapshot(ctx, route, { summary: null, outcomes: [] }),
  },
];
