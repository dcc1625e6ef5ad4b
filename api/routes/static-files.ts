import { z } from "zod";
import { apiDocsPage } from "../docs/page.ts";
import { compressBody } from "../lib/encoding.ts";
import type { ServingBuild, StoredEncoding } from "../lib/published.ts";
import { must } from "../../lib/must.ts";
import {
  type ApiDescriptions,
  DEFAULT_SERVER,
  type HandlerContext,
  type RouteDecl,
  type StaticResult,
} from "./route.ts";
import { declareTag } from "./tags.ts";

const TYPES: Record<string, string> = {
  csv: "text/csv; charset=utf-8",
  json: "application/json; charset=utf-8",
  ndjson: "application/x-ndjson",
  md: "text/markdown; charset=utf-8",
  duckdb: "application/octet-stream",
  parquet: "application/vnd.apache.parquet",
};
const typeOf = (path: string) => TYPES[path.slice(path.lastIndexOf(".") + 1)] ?? "application/octet-stream";
const tag = declareTag(
  "static",
  "Static files: datasets, sheets, the DuckDB file, this description and its reference page, Postman files, methodology changelogs.",
);

/** A file of the serving build with its stored compressed siblings, or null. */
async function buildFile(build: ServingBuild | null, path: string): Promise<StaticResult | null> {
  if (!build) return null;
  const bytes = await build.file(path);
  if (!bytes) return null;
  return { bytes, contentType: typeOf(path), encoded: (e) => build.file(path, e) };
}

/**
 * JSON generated from the route table (by the request's RouteServices.descriptions) once per origin (one per
 * process in practice), kept as bytes with its br/gzip forms.
 * @throws Error when no descriptions are wired in (api/app.ts always gives them).
 */
function generated(
  make: (descriptions: ApiDescriptions, origin: string) => unknown,
): (ctx: HandlerContext) => StaticResult {
  const cache = new WeakMap<ApiDescriptions, Map<string, StaticResult>>();
  return (ctx) => {
    const descriptions = must(ctx.services.descriptions, "RouteServices.descriptions (wired by api/app.ts)");
    const origin = originOf(ctx);
    let results = cache.get(descriptions);
    if (!results) {
      results = new Map<string, StaticResult>();
      cache.set(descriptions, results);
    }
    let result = results.get(origin);
    if (!result) {
      const bytes = Buffer.from(`${JSON.stringify(make(descriptions, origin), null, 1)}\n`);
      const forms: Record<StoredEncoding, Uint8Array> = {
        br: compressBody(bytes, "br"),
        gzip: compressBody(bytes, "gzip"),
      };
      result = { bytes, contentType: typeOf(".json"), encoded: async (e) => forms[e] };
      results.set(origin, result);
    }
    return result;
  };
}

/**
 * Origin the generated descriptions point at (OpenAPI `servers`, `/docs`, Postman `baseUrl`): the one the
 * server wires in (PUBLIC_BASE_URL, else its own listening address), else the embedded `make run` default.
 * Never the request's Host header: each distinct origin costs a `/docs` rendering.
 */
const originOf = (ctx: HandlerContext) => ctx.services.publicOrigin ?? DEFAULT_SERVER;

/** Dataset formats served (datasets/contract.ts DATASET_FORMATS). */
const FORMATS = "csv|json|ndjson|parquet";

const DatasetFile = z.object({
  topic: z.string().regex(/^[a-z0-9-]{1,64}$/, "must be a dataset topic"),
  file: z
    .string()
    .regex(
      new RegExp(`^((latest|\\d{4}-\\d{2}-\\d{2})\\.(${FORMATS})|datapackage\\.json)$`),
      "must be latest or YYYY-MM-DD with .csv, .json, .ndjson or .parquet, or datapackage.json",
    ),
});

/** A dated file of the serving build: `datasets/<topic>/<YYYY-MM-DD>.<ext>`. */
const datedIn = (topic: string, ext: string) => new RegExp(`^datasets/${topic}/\\d{4}-\\d{2}-\\d{2}\\.${ext}$`);

/**
 * Dated dataset file (`<topic>/<YYYY-MM-DD>.<fmt>`, kept 90 days outside builds), `latest`: the
 * newest dated file of the serving build (spec 1: a same-extension rewrite), or for an undated topic
 * its undated file `datasets/<topic>.<fmt>`; or the topic's `datapackage.json` of the serving build.
 */
async function datasetFile(ctx: HandlerContext): Promise<StaticResult | null> {
  const { topic, file } = ctx.params;
  if (file === "datapackage.json") return buildFile(ctx.build, `datasets/${topic}/datapackage.json`);
  const [day, ext] = file.split(".");
  if (day === "latest") {
    const pattern = datedIn(topic, ext);
    const dated = [...(ctx.build?.files.keys() ?? [])]
      .filter((p) => pattern.test(p))
      .sort()
      .at(-1);
    return buildFile(ctx.build, dated ?? `datasets/${topic}.${ext}`);
  }
  const key = `datasets/${topic}/${file}`;
  const bytes = await ctx.store.object(key);
  if (!bytes) return null;
  return {
    bytes,
    contentType: typeOf(file),
    encoded: ext === "parquet" ? async () => null : (e) => ctx.store.object(`${key}${e === "br" ? ".br" : ".gz"}`),
  };
}

/** The OpenAPI description served, its single server entry this process's origin (the committed file keeps the default). */
const openApi = generated((d, origin) => ({
  ...d.openApi(),
  servers: [{ url: origin, description: origin === DEFAULT_SERVER ? "Embedded default (`make run`)" : "This server" }],
}));
const postmanCollection = generated((d, origin) => d.postmanCollection(origin));
const postmanEnvironment = generated((d, origin) => d.postmanEnvironment(origin));

/** Static files (spec 1): no key, `Access-Control-Allow-Origin: *`, br/gzip by `Accept-Encoding`. */
export const STATIC_ROUTES: RouteDecl[] = [
  {
    kind: "static",
    operationId: "getDatasetFile",
    method: "GET",
    path: "/datasets/:topic/:file",
    lane: "public",
    tag,
    mediaType: "text/csv",
    params: DatasetFile,
    summary: "Dataset export (dated or latest)",
    description:
      "`/datasets/<topic>/latest.{csv,json,ndjson,parquet}` (the newest dated file; for an undated topic its `/datasets/<topic>.<fmt>` file), `/datasets/<topic>/<YYYY-MM-DD>.{csv,json,ndjson,parquet}` (kept 90 days; a missing dated URL means no published run, not an empty dataset) and `/datasets/<topic>/datapackage.json` (Frictionless tabular data package: resources, table schema with units, primary key, sources, licences, as-of, build id). CSVs start with one `#` provenance comment line; Parquet is served as `application/vnd.apache.parquet`.",
    handler: datasetFile,
  },
  {
    kind: "static",
    operationId: "getDatasetExport",
    method: "GET",
    path: "/datasets/:file",
    lane: "public",
    tag,
    mediaType: "application/json",
    params: z.object({
      file: z
        .string()
        .regex(new RegExp(`^[a-z0-9-]{1,64}\\.(${FORMATS})$`), "must be <topic>.csv, .json, .ndjson or .parquet"),
    }),
    summary: "Undated dataset export (e.g. the stablecoin cemetery, source-quality)",
    handler: (ctx) => buildFile(ctx.build, `datasets/${ctx.params.file}`),
  },
  {
    kind: "static",
    operationId: "getSheet",
    method: "GET",
    path: "/sheets/:file",
    lane: "public",
    tag,
    mediaType: "text/csv",
    params: z.object({ file: z.string().regex(/^[a-z0-9-]{1,64}\.csv$/, "must be <topic>.csv") }),
    summary: "Spreadsheet-friendly CSV of a dataset topic",
    handler: (ctx) => buildFile(ctx.build, `sheets/${ctx.params.file}`),
  },
  {
    kind: "static",
    operationId: "getPublishedDatabase",
    method: "GET",
    path: "/ballast.duckdb",
    lane: "public",
    tag,
    mediaType: "application/octet-stream",
    summary: "The published DuckDB database of the serving build",
    description: "Registry and every mart of the serving build, for `duckdb -readonly`.",
    handler: (ctx) => buildFile(ctx.build, "ballast.duckdb"),
  },
  {
    kind: "static",
    operationId: "getMethodologyChangelog",
    method: "GET",
    path: "/methodology/:file",
    lane: "public",
    tag,
    mediaType: "text/markdown",
    params: z.object({ file: z.string().regex(/^[a-z0-9-]{1,64}\.md$/, "must be <analytic>.md") }),
    summary: "Changelog of an analytic's methodology (the `changelogPath` of methodology objects)",
    handler: (ctx) => buildFile(ctx.build, `methodology/${ctx.params.file}`),
  },
  {
    kind: "static",
    operationId: "getOpenApi",
    method: "GET",
    path: "/openapi.json",
    lane: "public",
    tag,
    mediaType: "application/json",
    summary: "This OpenAPI 3.1 description",
    handler: async (ctx) => openApi(ctx),
  },
  {
    kind: "static",
    operationId: "getApiReference",
    method: "GET",
    path: "/docs",
    lane: "public",
    tag,
    mediaType: "text/html",
    summary: "API reference page (HTML) rendered from this OpenAPI description",
    description:
      "Redoc page generated by `redocly build-docs` from `/openapi.json` on the first request after the description changes (then kept). Served with a Content-Security-Policy that lets the page load nothing outside itself (inline scripts by hash, data: images and fonts, no connections).",
    handler: (ctx) => apiDocsPage(openApi(ctx).bytes, ctx.services.docsDir),
  },
  {
    kind: "static",
    operationId: "getPostmanCollection",
    method: "GET",
    path: "/postman/ballast.postman_collection.json",
    lane: "public",
    tag,
    mediaType: "application/json",
    summary: "Postman collection of every public route",
    handler: async (ctx) => postmanCollection(ctx),
  },
  {
    kind: "static",
    operationId: "getPostmanEnvironment",
    method: "GET",
    path: "/postman/ballast.postman_environment.json",
    lane: "public",
    tag,
    mediaType: "application/json",
    summary: "Postman environment (baseUrl, apiKey)",
    handler: async (ctx) => postmanEnvironment(ctx),
  },
];
