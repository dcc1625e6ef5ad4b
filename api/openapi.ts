import { z } from "zod";
import { ROUTES } from "./routes.ts";

/** OpenAPI 3.1 description generated from the route declarations (committed as api/openapi.json). */
export function buildOpenApi() {
  const paths: Record<string, Record<string, unknown>> = {};
  const jsonSchema = (s: z.ZodType) => z.toJSONSchema(s, { target: "draft-2020-12", unrepresentable: "any", io: "input" });
  for (const r of ROUTES) {
    const oaPath = r.path.replace(/:([A-Za-z]+)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const [name, s] of Object.entries(r.params?.shape ?? {})) parameters.push({ name, in: "path", required: true, schema: jsonSchema(s as z.ZodType), description: (s as z.ZodType).description });
    for (const [name, s] of Object.entries(r.query?.shape ?? {})) parameters.push({ name, in: "query", required: !(s as z.ZodType).safeParse(undefined).success, schema: { type: "string" } });
    paths[oaPath] = {
      get: {
        summary: r.summary,
        description: r.description,
        security: r.auth === "apiKey" ? [{ apiKey: [] }] : [],
        parameters,
        "x-cache-profile": r.cache,
        "x-freshness-max-age-sec": r.maxAgeSec,
        responses: {
          "200": { description: "OK", content: { "application/json": { schema: jsonSchema(r.response) } } },
          "400": { $ref: "#/components/responses/Error" },
          ...(r.auth === "apiKey" ? { "401": { $ref: "#/components/responses/Error" }, "429": { $ref: "#/components/responses/Error" } } : {}),
          "404": { $ref: "#/components/responses/Error" },
          "503": { $ref: "#/components/responses/Error" },
        },
      },
    };
  }
  paths["/api/health"] = { get: { summary: "Service health (exempt from key)", security: [], "x-cache-profile": "realtime", responses: { "200": { description: "Health resource (spec 2.8); `clock` tells whether the replay clock (recorded builds) or the wall clock is in force; `blacklist`/`mintBurn` are null until those features are published." } } } };
  return {
    openapi: "3.1.0",
    info: {
      title: "Ballast stablecoin analytics API",
      version: "1.0.0",
      description: "Snapshot-backed reads over the latest published build. Send `X-API-Key: bl_live_<16 hex>_<32 base64url>`. Errors are `{ \"error\": message }`. Freshness: `X-Data-Age`, `X-Data-Updated-At`, and past 8x the route budget `Warning: 110` with `Cache-Control: no-store`. A server over a build made from recorded captures runs on a replay clock (as-of + time since start). Static datasets (`/datasets/...`, `/sheets/...`) need no key.",
    },
    components: {
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "X-API-Key" } },
      responses: { Error: { description: "Error", content: { "application/json": { schema: { type: "object", properties: { error: { type: "string" } }, required: ["error"] } } } } },
    },
    paths,
  };
}
