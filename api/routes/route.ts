import type { z } from "zod";
import { type Artifact, type ArtifactOutput, outputPath } from "../../site-data/contract.ts";
import { stablecoinDetailArtifact } from "../../site-data/stablecoin-detail.ts";
import type { Lane } from "../lib/auth.ts";
import type { StateStoreHealth, StatusHistoryHealth } from "../health.ts";
import type { CacheProfile } from "../lib/freshness.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { PublishedStore, ServingBuild, StoredEncoding } from "../lib/published.ts";
import type { StatusHistoryStore } from "../lib/status-history.ts";
import type { AdminContext, AdminResult } from "../lib/ops-services.ts";
import type { TelegramService } from "../lib/telegram/service.ts";
import type { LimiterStoreHealth } from "../lib/rate-limit.ts";
import type { DonorClaimDeps } from "../lib/donor-claims.ts";
import type { FeedbackStore } from "../lib/feedback.ts";
import { must } from "../../lib/must.ts";

/**
 * What a JSON handler returns. Exactly one of `file` (a published file of the build, served byte for
 * byte, with its stored br/gzip siblings), `json` (serialised text) or `payload` (serialised by the
 * app). `dataAsOf` is the data time (Unix s) for freshness; `meta` is merged over the `_meta`
 * freshness block of routes that carry one (a `degraded` flag also turns true when stale).
 */
export interface RouteResult {
  file?: string;
  json?: string;
  /** Serialised JSON as bytes, sent as they are (routes without `_meta`): large pages built from cached fragments. */
  bytes?: Uint8Array;
  payload?: unknown;
  dataAsOf: number | null;
  meta?: Record<string, unknown>;
  /** Send `Cache-Control: no-store` whatever the freshness (a held publication, spec 4.1 report-cards/v9). */
  noStore?: boolean;
  /**
   * Cache-Control profile of this response instead of the route's `cache` (reserves by mode, spec 8:
   * `reserve-live`, `reserve-live-stale`, `reserve-fallback`). Freshness rules still apply: past the
   * fresh runway the response is `no-store`.
   */
  cacheProfile?: CacheProfile;
  /** Payload served instead when the data is stale (spec 4.1: the resolver's empty rows). */
  whenStale?: unknown;
  /** Entity tag of the body (sent quoted as `ETag`; a matching `If-None-Match` answers 304): dated snapshots. */
  etag?: string;
}

/** What a static handler returns: bytes, their media type, and a reader of stored compressed siblings. */
export interface StaticResult {
  bytes: Uint8Array;
  contentType: string;
  encoded?: (encoding: StoredEncoding) => Promise<Uint8Array | null>;
  /** Cache-Control; default `public, max-age=300`. */
  cacheControl?: string;
  /** Further response headers (the API reference page's Content-Security-Policy). */
  headers?: Record<string, string>;
}

/** Everything a handler may use. `build` is resolved once per request; `query`/`params` are validated. */
export interface HandlerContext {
  build: ServingBuild | null;
  store: PublishedStore;
  /** Query parameters as the route's `query` schema output them (handlers read them through that schema's type). */
  query: Record<string, unknown>;
  params: Record<string, string>;
  /** Service time (Unix s) under the clock mode. */
  now: number;
  clock: "replay" | "wall";
  /**
   * Wall clock (Unix s) at the same instant as `now`. Times the process records on the wall clock
   * (state store, status history) are reported shifted by `now − wallNow`, on the clock of `now`.
   */
  wallNow: number;
  /** Extra facts the server wires in (state store status for health). */
  services: RouteServices;
  /**
   * The request body (POST routes), read at most once: its bytes when they are at most `maxBytes`
   * (judged on `Content-Length` first, then on what arrives), else a 413 HttpError carrying `extra`
   * (e.g. `{ reason: "body_invalid" }`). Absent on GET routes.
   */
  readBody?: (maxBytes: number, extra?: Record<string, unknown>) => Promise<Uint8Array>;
}

/** Default server of the embedded process (`make run`): the origin generated descriptions point at unless one is wired in; deployments list their own origins first. */
export const DEFAULT_SERVER = "http://127.0.0.1:8787";

/**
 * The generated descriptions of the route table that the static routes serve (`/openapi.json`, `/docs`,
 * the Postman files): api/openapi.ts `buildOpenApi` and api/postman.ts. The app (api/app.ts) hands them in
 * as RouteServices.descriptions: a route file importing them would import the route table it is part of
 * (an import circle).
 */
export interface ApiDescriptions {
  /** The OpenAPI 3.1 document of the public routes, `servers` the embedded default. */
  openApi(): object;
  /** Postman collection (v2.1) of the public routes, `baseUrl` an origin without trailing slash. */
  postmanCollection(baseUrl: string): unknown;
  /** Postman environment whose `baseUrl` is the origin given. */
  postmanEnvironment(baseUrl: string): unknown;
}

/** What the server wires in for routes: facts about its dependencies (health reports them), the stores they read, where `/docs` is generated. */
export interface RouteServices {
  /** The state store as this process sees it (`lastOkAt` wall-clock Unix s). */
  stateStore?: () => StateStoreHealth;
  /** The rate limiter's store (health `limiterStore`). */
  limiterStore?: () => LimiterStoreHealth;
  /**
   * The public status history: the store `/api/public-status-history` reads, and this process's
   * recorder status for health (`lastRecordedAt` wall-clock Unix s). Without it the route answers 503.
   */
  statusHistory?: { store: Pick<StatusHistoryStore, "publicHistory">; recorder?: () => StatusHistoryHealth };
  /** Directory the `/docs` page is generated into once (server: `<BALLAST_DATA_DIR>/docs`; default a temp dir). */
  docsDir?: string;
  /**
   * Origin (`http://127.0.0.1:8787`, no trailing slash) the OpenAPI `servers`, the `/docs` page and the
   * Postman `baseUrl` point at. Server: PUBLIC_BASE_URL, else `http://<HOST>:<listening port>`; unset: the
   * embedded default (DEFAULT_SERVER).
   */
  publicOrigin?: string;
  /**
   * The descriptions `/openapi.json`, `/docs` and the Postman routes serve; api/app.ts gives them when
   * the server does not. Without them those routes throw.
   */
  descriptions?: ApiDescriptions;
  /** Donor key claims (api/lib/donor-claims.ts); without it claims answer 403 `claims_closed`. */
  donorClaims?: DonorClaimDeps;
  /** Feedback intake (api/lib/feedback.ts); without it feedback answers 503. */
  feedback?: FeedbackStore;
  /** The messaging bot (api/lib/telegram/); without it the bot routes answer 503 and health's `telegramSummary` is null. */
  telegram?: TelegramService;
}

/** An artifact output a route serves: path template, schema and freshness budget all come from the artifact. */
export interface ArtifactBinding {
  key: string;
  output: ArtifactOutput;
  maxAgeSec: number;
  /** The artifact is published only when its source has rows (Artifact.optional): 503 until then. */
  optional: boolean;
}

/** Binds a route to `artifact`'s output `name` (default `main`). */
export function bind(artifact: Artifact, name = "main"): ArtifactBinding {
  const output = artifact.outputs[name];
  if (!output) throw new Error(`artifact ${artifact.key} has no output ${name}`);
  return { key: artifact.key, output, maxAgeSec: artifact.maxAgeSec, optional: artifact.optional === true };
}

interface RouteBase {
  /** OpenAPI operationId, unique. */
  operationId: string;
  method: "GET" | "POST";
  /** Hono path (`:param`). */
  path: string;
  lane: Lane;
  summary: string;
  description?: string;
  /** OpenAPI tag: the resource file that declares it. */
  tag: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
}

/**
 * A JSON read route. With `artifact`, the served file's path, schema and freshness budget come from
 * the artifact, and without a `handler` the route serves that file as published (404 for an unknown
 * `{id}`, 503 when the build lacks it). `notYetAvailable` declares a spec route whose data no build
 * publishes yet: it answers 503 "Data not yet available" (spec 7 rule 3) and never invents data.
 */
export interface JsonRoute extends RouteBase {
  kind: "json";
  cache: CacheProfile;
  artifact?: ArtifactBinding;
  /** Freshness budget (s) when there is no artifact. */
  maxAgeSec?: number;
  /** Freshness ratios; chains uses 1x/2x (spec 3.2). */
  ratios?: { fresh: number; degraded: number };
  /** Adds the `_meta` freshness block to object bodies. */
  meta: boolean;
  /** Response schema; defaults to the artifact output's. */
  response?: z.ZodType;
  /** Entity id of a templated artifact path (default: the first path parameter). */
  id?: (ctx: HandlerContext) => string;
  /** What the id names in a 404 (default `stablecoin id`). */
  idLabel?: string;
  /** Responses may be reused within one service second for one build (default true). */
  cacheable?: boolean;
  /** Feature a spec route serves once a build publishes it; until then 503 (after the handler, when there is one, has checked the request). */
  notYetAvailable?: string;
  /** Receives the route itself, so shared helpers read its artifact binding. */
  handler?(ctx: HandlerContext, route: JsonRoute): Promise<RouteResult>;
}

/** A static file route (datasets, sheets, the DuckDB file, OpenAPI, Postman, OG images): no key, `Access-Control-Allow-Origin: *`. */
export interface StaticRoute extends RouteBase {
  kind: "static";
  /** Media type documented in OpenAPI. */
  mediaType: string;
  /** Cache-Control profile its results carry (documented in OpenAPI); default `public, max-age=300`. */
  cache?: CacheProfile;
  /** Feature whose files the route serves: 503 `Data not yet available: <feature>` while the build lacks them (health lists it). */
  feature?: string;
  handler(ctx: HandlerContext): Promise<StaticResult | null>;
}

/**
 * An operator route (spec 4.5), served only by the operator listener (api/ops-app.ts) and 404 on the
 * public host before key authentication. Every response is `no-store`. `mutating` routes need
 * `X-Ballast-Admin: 1` and an allowlisted Origin when one is sent; `idempotent` routes honor
 * `Idempotency-Key` under `action`. Query parameters are validated by `query` (unknown ones are 400),
 * a JSON body by `body` (a route without one accepts none).
 */
export interface AdminRoute extends RouteBase {
  kind: "admin";
  lane: "admin";
  mutating: boolean;
  /** Name of the action: idempotency rows and job records are keyed by it (e.g. `backfill-depegs`). */
  action: string;
  idempotent?: boolean;
  body?: z.ZodObject;
  /**
   * A GET on a dual-mode route that changes state unless this holds on the raw query (audit-depeg-history
   * without `dry-run=true`): otherwise 405 `Allow: POST`.
   */
  getAllowed?: (query: Record<string, string>) => boolean;
  /** What the success body holds (OpenAPI). */
  responseDescription: string;
  /** Status of a success (OpenAPI; default 200). */
  successStatus?: 200 | 201 | 202;
  handler(ctx: AdminContext): Promise<AdminResult>;
}

/**
 * What a public write handler answers: a status and a JSON body (`json`) or plain text (`text`),
 * always with `Cache-Control: no-store` (spec 4.4: public POSTs are never edge-cached). Failures are
 * thrown as HttpError (`{ error, ...extra }`, also no-store).
 */
export interface WriteResult {
  status: 200 | 201 | 202;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/** Everything a write handler may use: the read context, the client, its headers and the size-capped body reader. */
export interface WriteContext extends Omit<HandlerContext, "query" | "params" | "readBody"> {
  /** Client IP (socket address; the server is the edge). */
  ip: string;
  header(name: string): string | undefined;
  /** See HandlerContext.readBody: 413 with `extra` past `maxBytes`. */
  readBody(maxBytes: number, extra?: Record<string, unknown>): Promise<Uint8Array>;
  /** The request came through the website-internal lane (it carries `X-Ballast-Site-Proxy-Secret`). */
  viaSiteLane: boolean;
}

/**
 * A public-host write route (spec 4.4): POST only, never cached, every answer `no-store`. The lane
 * check runs first (LaneAuth); the handler does its own limits and body checks, in the order its
 * contract names (donor claims: closed switch, per-IP limit, then the body).
 */
export interface WriteRoute extends RouteBase {
  kind: "write";
  method: "POST";
  /** Documented request body: media type, shape (zod, for OpenAPI) and words. */
  requestBody?: { mediaType: string; schema?: z.ZodType; description: string };
  /** Documented answers, status → description (OpenAPI); `200`/`201` carry `responseMediaType`. */
  responses: Record<string, string>;
  /** Media type of the success body (default `application/json`). */
  responseMediaType?: string;
  handler(ctx: WriteContext): Promise<WriteResult>;
}

/** Routes the public listener serves (everything but operator routes). */
export type PublicRouteDecl = JsonRoute | StaticRoute | WriteRoute;

/** One route, declared once: serving, validation, auth lane, OpenAPI, Postman and route tests read it. */
export type RouteDecl = JsonRoute | StaticRoute | WriteRoute | AdminRoute;

/**
 * The artifact binding of a route that serves one (`artifact` declared).
 * @throws Error when the route declares no artifact (a helper used on the wrong route).
 */
export function artifactOf(route: JsonRoute): ArtifactBinding {
  if (!route.artifact) throw new Error(`route ${route.operationId} has no artifact binding`);
  return route.artifact;
}

/**
 * The validated `stablecoin` query parameter: the entity id of per-coin routes (their query schema
 * requires it, so a handler never runs without it).
 * @throws Error when it is absent (a route declared without the parameter).
 */
export function stablecoinQuery(ctx: HandlerContext): string {
  const id = ctx.query.stablecoin;
  if (typeof id !== "string") throw new Error("query parameter stablecoin is missing (route declared without it)");
  return id;
}

/** The published file a JSON route's artifact binding names for this request. */
export function artifactPath(route: JsonRoute, ctx: HandlerContext): string {
  const b = artifactOf(route);
  return b.output.path.includes("{id}") ? outputPath(b.output, (route.id ?? firstParam)(ctx)) : b.output.path;
}

const firstParam = (ctx: HandlerContext) => Object.values(ctx.params)[0];

/** The build of a request; 503 when nothing is published yet. */
export function need(build: ServingBuild | null): ServingBuild {
  if (!build) throw notYetAvailable("no published build");
  return build;
}

/**
 * Reads and validates the route's artifact file: 404 for an unknown `{id}` (spec 1 rule 3), 503 when
 * the build lacks the file or it fails its schema (spec 7 rule 3), the storage's own 503
 * (StorageUnavailableError) when published storage does not answer.
 */
export async function artifactPayload<T>(route: JsonRoute, ctx: HandlerContext): Promise<{ value: T; path: string }> {
  const build = need(ctx.build);
  const b = artifactOf(route);
  const path = artifactPath(route, ctx);
  if (!build.files.has(path)) throw missing(route, ctx);
  let value: T | undefined;
  try {
    value = await build.payload(path, (x) => b.output.schema.parse(x) as T);
  } catch (err) {
    // Storage that does not answer keeps its own 503 (`Published storage temporarily unavailable`, Retry-After 30).
    if (err instanceof HttpError) throw err;
    throw notYetAvailable(b.key);
  }
  // Listed in the manifest but unreadable as absent (the store lost the file): a server error.
  return { value: must(value, `published file ${path}`), path };
}

/**
 * The `{id}` file of a per-coin history route whose artifact publishes files only for coins with rows
 * (id = `ctx.query.stablecoin`): null for a listed coin without a file (the caller answers `[]`), else
 * the validated payload; 404 for an unknown id, 503 when the build lacks the data (for an optional
 * artifact: when the build publishes no file of it at all, rather than `[]` for every coin).
 */
export async function perCoinRows<T>(
  route: JsonRoute,
  ctx: HandlerContext,
): Promise<{ value: T; path: string } | null> {
  const build = need(ctx.build);
  const b = artifactOf(route);
  const id = stablecoinQuery(ctx);
  if (
    !build.files.has(outputPath(b.output, id)) &&
    build.files.has(outputPath(stablecoinDetailArtifact.outputs.main, id))
  ) {
    // An optional artifact with no file at all in this build is not published yet: 503, not an empty history.
    if (b.optional && !(await publishesArtifact(build, b.key))) throw notYetAvailable(b.key);
    return null;
  }
  return artifactPayload<T>(route, ctx);
}

/** Whether the build publishes at least one file of artifact `key` (memoised per build). */
function publishesArtifact(build: ServingBuild, key: string): Promise<boolean> {
  return build.memo(`publishes:${key}`, () => [...build.files.values()].some((f) => f.artifact === key));
}

/** 404 naming the unknown id for templated outputs, else 503 not yet available. */
export function missing(route: JsonRoute, ctx: HandlerContext): HttpError {
  const b = artifactOf(route);
  if (b.output.path.includes("{id}"))
    return new HttpError(404, `Unknown ${route.idLabel ?? "stablecoin id"}: ${(route.id ?? firstParam)(ctx)}`);
  return notYetAvailable(b.key);
}

/**
 * Default handler of an artifact route: the published file byte for byte, after a schema check at
 * first read of each build (so a corrupt file is 503, never served).
 */
export async function serveArtifact(route: JsonRoute, ctx: HandlerContext): Promise<RouteResult> {
  const { path } = await artifactPayload(route, ctx);
  return { file: path, dataAsOf: need(ctx.build).dataAsOf(path) };
}

/**
 * A query route's answer over its artifact's ledger (a published file holding every row): `page`
 * turns the parsed, schema-checked ledger into the payload, or into `{ bytes }` (serialised JSON);
 * the data time is the ledger file's.
 */
export async function ledgerPage<T>(
  route: JsonRoute,
  ctx: HandlerContext,
  page: (ledger: T) => unknown,
): Promise<RouteResult> {
  const { value, path } = await artifactPayload<T>(route, ctx);
  const out = await page(value);
  const dataAsOf = need(ctx.build).dataAsOf(path);
  const bytes = (out as { bytes?: unknown } | null)?.bytes;
  return bytes instanceof Uint8Array ? { bytes, dataAsOf } : { payload: out, dataAsOf };
}
