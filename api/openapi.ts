import { z } from "zod";
import { declaredParamType } from "./lib/query-params.ts";
import { CACHE_PROFILES } from "./lib/freshness.ts";
import { componentSchemas, nameResponseSchemas } from "./lib/openapi-components.ts";
import { ROUTES } from "./routes/index.ts";
import { DEFAULT_SERVER, type JsonRoute, type PublicRouteDecl, type WriteRoute } from "./routes/route.ts";
import { declaredTags } from "./routes/tags.ts";

const SECURITY: Record<string, Record<string, string[]>[]> = {
  public: [],
  "signed-wallet": [],
  "init-data": [],
  apiKey: [{ apiKey: [] }],
  site: [{ siteProxySecret: [] }],
  webhook: [{ webhookSecret: [] }],
};

const err = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

type ResponseNames = ReturnType<typeof nameResponseSchemas>;
const jsonSchema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, { target: "draft-2020-12", unrepresentable: "any", io });

/** Routes documented on the public host (operator-lane routes are 404 here and described on the operator host). */
export const documentedRoutes = (): PublicRouteDecl[] =>
  ROUTES.filter((r): r is PublicRouteDecl => r.kind !== "admin" && r.lane !== "admin");

/** OpenAPI path of a Hono path (`:id` → `{id}`). */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, "{$1}");

/**
 * OpenAPI parameter objects of a route's declared path parameters (all required) then query
 * parameters (required when `undefined` does not parse), each with its schema's description (else
 * its name) and declared type. Used by the public and the operator document (api/ops-openapi.ts).
 */
export function routeParameters(r: {
  params?: { shape: Record<string, unknown> };
  query?: { shape: Record<string, unknown> };
}): unknown[] {
  const out: unknown[] = [];
  for (const [name, s] of Object.entries(r.params?.shape ?? {})) {
    out.push({
      name,
      in: "path",
      required: true,
      description: (s as z.ZodType).description ?? name,
      schema: declaredParamType(s as z.ZodType),
    });
  }
  for (const [name, s] of Object.entries(r.query?.shape ?? {})) {
    out.push({
      name,
      in: "query",
      required: !(s as z.ZodType).safeParse(undefined).success,
      description: (s as z.ZodType).description ?? name,
      schema: declaredParamType(s as z.ZodType),
    });
  }
  return out;
}

/** Response schema of a JSON route, as declared (the route's `response`, else its artifact's output schema). */
const responseSchema = (r: JsonRoute) => r.response ?? r.artifact?.output.schema;

/** `$ref` to a named component schema (see api/lib/openapi-components.ts). */
const ref = (names: ResponseNames, s: z.ZodType) => ({ $ref: `#/components/schemas/${names.get(s)?.id}` });

function jsonResponses(r: JsonRoute, names: ResponseNames) {
  const schema = responseSchema(r);
  const ok = r.notYetAvailable
    ? { description: "Not returned until the feature is published (see 503)." }
    : { description: "OK", content: { "application/json": schema ? { schema: ref(names, schema) } : {} } };
  return {
    [r.method === "POST" ? "201" : "200"]: ok,
    "400": err("Invalid parameter: the message names it"),
    ...(r.lane === "apiKey"
      ? {
          "401": err("Missing or invalid X-API-Key"),
          "429": err(
            "Per-key limit exceeded (`Rate limit exceeded`), or too many invalid keys from this client IP (`Too many invalid API keys from this address`; never counts valid keys); both with `Retry-After`",
          ),
        }
      : {}),
    ...(r.lane === "site" || r.lane === "webhook" ? { "401": err("Missing or wrong lane secret") } : {}),
    "404": err("Unknown id or path"),
    "503": err("Data not yet available, or the auth/limiter dependency is unavailable (`Retry-After: 60`)"),
  };
}

/** Request body and answers of a write route, from its declaration (failures are `{ error, ... }`). */
function writeParts(r: WriteRoute) {
  const body = r.requestBody;
  return {
    ...(body
      ? {
          requestBody: {
            required: true,
            description: body.description,
            content: { [body.mediaType]: body.schema ? { schema: jsonSchema(body.schema, "input") } : {} },
          },
        }
      : {}),
    "x-cache-control": "no-store",
    responses: Object.fromEntries(
      Object.entries(r.responses).map(([status, description]) => [
        status,
        status.startsWith("2")
          ? { description, content: { [r.responseMediaType ?? "application/json"]: {} } }
          : err(description),
      ]),
    ),
  };
}

function operation(r: PublicRouteDecl, names: ResponseNames) {
  if (r.kind === "write") {
    return {
      operationId: r.operationId,
      tags: [r.tag],
      summary: r.summary,
      description: r.description ?? r.summary,
      security: SECURITY[r.lane],
      parameters: [],
      ...writeParts(r),
    };
  }
  const budget = r.kind === "json" ? (r.artifact?.maxAgeSec ?? r.maxAgeSec) : undefined;
  return {
    operationId: r.operationId,
    tags: [r.tag],
    summary: r.summary,
    description: r.description ?? r.summary,
    security: SECURITY[r.lane],
    parameters: routeParameters(r),
    ...(r.kind === "json"
      ? {
          "x-cache-profile": r.cache,
          "x-cache-control": CACHE_PROFILES[r.cache],
          ...(budget !== undefined ? { "x-freshness-max-age-sec": budget } : {}),
          responses: jsonResponses(r, names),
        }
      : {
          ...(r.cache ? { "x-cache-profile": r.cache } : {}),
          "x-cache-control": r.cache ? CACHE_PROFILES[r.cache] : "public, max-age=300",
          responses: {
            "200": { description: "OK", content: { [r.mediaType]: {} } },
            "400": err(r.params ? "Invalid parameter: the message names it" : "Invalid file name"),
            "404": err("Not published, or unknown id"),
            ...(r.feature ? { "503": err(`Data not yet available: ${r.feature} (\`Retry-After: 60\`)`) } : {}),
          },
        }),
  };
}

/** OpenAPI 3.1 description generated from the route table (committed as api/openapi.json; a test fails on drift). */
export function buildOpenApi() {
  const routes = documentedRoutes();
  const roots: [string, z.ZodType][] = [];
  for (const r of routes) {
    const s = r.kind === "json" && !r.notYetAvailable ? responseSchema(r) : undefined;
    if (s) roots.push([`${r.operationId}Response`, s]);
  }
  const names = nameResponseSchemas(roots);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = openApiPath(r.path);
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = operation(r, names);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Ballast stablecoin analytics API",
      version: "1.0.0",
      license: { name: "Proprietary", identifier: "LicenseRef-Ballast" },
      description: [
        "Snapshot-backed reads over the latest published build. Send `X-API-Key: bl_live_<16 hex>_<32 base64url>` on keyed routes.",
        'Errors are `{ "error": message }`. Freshness: `X-Data-Age`, `X-Data-Updated-At`, and past 8x the route budget `Warning: 110` with `Cache-Control: no-store`.',
        "A server over a build made from recorded captures runs on a replay clock (as-of + time since start).",
        "Every route rejects unknown query parameters with 400 naming them. Responses are compressed (br, gzip) by `Accept-Encoding` and carry `Vary: Origin, Accept-Encoding`.",
        "Operator routes (spec 4.5) are 404 on this host, before key authentication. Static datasets (`/datasets/...`, `/sheets/...`) need no key.",
      ].join("\n\n"),
    },
    servers: [{ url: DEFAULT_SERVER, description: "Embedded default (`make run`)" }],
    // each tag as declared beside its routes (api/routes/tags.ts), in order of first use
    tags: declaredTags(documentedRoutes().map((r) => r.tag)),
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "Public API key (spec 5.1)" },
        siteProxySecret: {
          type: "apiKey",
          in: "header",
          name: "X-Ballast-Site-Proxy-Secret",
          description: "Website-internal lane (spec 5.7)",
        },
        webhookSecret: {
          type: "apiKey",
          in: "header",
          name: "X-Telegram-Bot-Api-Secret-Token",
          description: "Messaging-bot webhook secret",
        },
      },
      schemas: {
        Error: { type: "object", properties: { error: { type: "string" } }, required: ["error"] },
        ...componentSchemas(names),
      },
    },
    paths,
  };
}
