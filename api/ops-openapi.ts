import { z } from "zod";
import { openApiPath, routeParameters } from "./openapi.ts";

/** Default operator listener (`OPS_HOST` 127.0.0.1, `OPS_PORT` 8788, api/config.ts); deployments front it with the access proxy. */
export const DEFAULT_OPS_SERVER = "http://127.0.0.1:8788";
import type { AdminRoute } from "./routes/route.ts";

const err = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});
const schemaOf = (s: z.ZodType) => z.toJSONSchema(s, { target: "draft-2020-12", unrepresentable: "any", io: "input" });

function operation(r: AdminRoute) {
  const parameters = routeParameters(r);
  if (r.mutating)
    parameters.push({
      name: "X-Ballast-Admin",
      in: "header",
      required: true,
      description: "Must be `1` on mutating operator requests",
      schema: { type: "string", enum: ["1"] },
    });
  if (r.idempotent) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "1-128 characters (trimmed): the first response is stored for 7 days and replayed with `X-Idempotent-Replay: true`; the same key with another request is 409",
      schema: { type: "string", maxLength: 128 },
    });
  }
  return {
    operationId: r.operationId,
    tags: ["admin"],
    summary: r.summary,
    description: r.description ?? r.summary,
    security: [{ accessJwt: [] }, { serviceTokenId: [], serviceTokenSecret: [] }],
    parameters,
    ...(r.body
      ? { requestBody: { required: true, content: { "application/json": { schema: schemaOf(r.body) } } } }
      : {}),
    "x-cache-control": "no-store",
    responses: {
      [String(r.successStatus ?? 200)]: { description: r.responseDescription, content: { "application/json": {} } },
      ...(r.successStatus === 202
        ? {}
        : {
            "202": {
              description:
                "A background job still running after a few seconds: `{ ok, accepted, requestId, status, statusPath }`",
            },
          }),
      "400": err("Invalid parameter or body: the message names it"),
      "401": err("Missing or invalid operator credentials (access JWT or service token)"),
      ...(r.mutating ? { "403": err("Missing `X-Ballast-Admin: 1`, or an Origin not on the operator allowlist") } : {}),
      "404": err("Unknown resource"),
      ...(r.idempotent ? { "409": err("Idempotency-Key reused with a different request, or still reserved") } : {}),
      "502": err("The access JWKS could not be fetched"),
      "503": err("Data not yet available (no job yet / no published build), or the state store is unavailable"),
    },
  };
}

/**
 * OpenAPI 3.1 description of the operator lane (served at `/openapi.json` on the operator listener,
 * never on the public host), generated from the operator route declarations.
 */
export function buildOperatorOpenApi(routes: AdminRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = openApiPath(r.path);
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = operation(r);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Ballast operator API",
      version: "1.0.0",
      license: { name: "Proprietary", identifier: "LicenseRef-Ballast" },
      description: [
        "Operator routes (spec 4.5) on the operator listener (`OPS_HOST:OPS_PORT`). Authenticate with the access proxy's JWT (`Cf-Access-Jwt-Assertion`) or a service token (`CF-Access-Client-Id` + `CF-Access-Client-Secret`).",
        "Mutating requests also need `X-Ballast-Admin: 1` and, when an Origin is sent, an Origin on `OPS_ALLOWED_ORIGINS`. Every response is `Cache-Control: no-store`.",
        "Jobs run the pipeline CLIs in the background: a job still running after a few seconds answers 202 `{ ok, accepted, requestId }`; poll `GET /api/admin/jobs/{requestId}`.",
      ].join("\n\n"),
    },
    servers: [{ url: DEFAULT_OPS_SERVER, description: "Embedded default operator listener (`OPS_HOST:OPS_PORT`)" }],
    tags: [
      {
        name: "admin",
        description: "Operator routes: API keys, discovery candidates, pipeline jobs, maintenance mode.",
      },
    ],
    components: {
      securitySchemes: {
        accessJwt: {
          type: "apiKey",
          in: "header",
          name: "Cf-Access-Jwt-Assertion",
          description: "Access-proxy JWT (signature, audience, issuer, expiry checked)",
        },
        serviceTokenId: { type: "apiKey", in: "header", name: "CF-Access-Client-Id", description: "Service token id" },
        serviceTokenSecret: {
          type: "apiKey",
          in: "header",
          name: "CF-Access-Client-Secret",
          description: "Service token secret",
        },
      },
      schemas: { Error: { type: "object", properties: { error: { type: "string" } }, required: ["error"] } },
    },
    paths,
  };
}
