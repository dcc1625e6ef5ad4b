import type { z } from "zod";
import { declaredParamType } from "./lib/query-params.ts";
import { documentedRoutes } from "./openapi.ts";
import { DEFAULT_SERVER, type RouteDecl } from "./routes/route.ts";

/** Example values of path parameters, so every request of the collection runs as is. */
const PATH_EXAMPLES: Record<string, string> = {
  stablecoinId: "usdt-tether",
  topic: "stablecoins",
  file: "latest.csv",
  date: "2025-09-07",
  snapshot: "2025-09-07.json",
};

/**
 * The typed view of a parameter as Postman shows it, from the same declaration the OpenAPI description uses:
 * `(integer 1-1000, default 100)`, `(boolean, default false)`, `(one of: a, b)`; empty for a free string.
 */
function typeNote(t: Record<string, unknown>): string {
  const parts: string[] = [];
  if (t.type === "integer" || t.type === "number") {
    parts.push(`${t.type}${t.minimum !== undefined ? ` ${t.minimum}-${t.maximum}` : ""}`);
  } else if (t.type === "boolean") parts.push("boolean");
  if (Array.isArray(t.enum)) parts.push(`one of: ${t.enum.join(", ")}`);
  if (t.default !== undefined) parts.push(`default ${String(t.default)}`);
  return parts.length ? `(${parts.join(", ")})` : "";
}

function item(r: RouteDecl) {
  const segments = r.path
    .split("/")
    .filter(Boolean)
    .map((s) => (s.startsWith(":") ? `:${s.slice(1)}` : s));
  const variable = Object.keys(r.params?.shape ?? {}).map((key) => ({ key, value: PATH_EXAMPLES[key] ?? "" }));
  const query = Object.entries(r.query?.shape ?? {}).map(([key, s]) => {
    const schema = s as z.ZodType;
    const required = !schema.safeParse(undefined).success;
    const type = declaredParamType(schema);
    return {
      key,
      value: key === "stablecoin" ? "usdt-tether" : type.default !== undefined ? String(type.default) : "",
      disabled: !required,
      description: [schema.description ?? "", typeNote(type)].filter(Boolean).join(" "),
    };
  });
  return {
    name: `${r.method} ${r.path}`,
    request: {
      method: r.method,
      header: r.lane === "apiKey" ? [{ key: "X-API-Key", value: "{{apiKey}}" }] : [],
      url: {
        raw: `{{baseUrl}}${r.path}`,
        host: ["{{baseUrl}}"],
        path: segments,
        ...(variable.length ? { variable } : {}),
        ...(query.length ? { query } : {}),
      },
      description: r.description ?? r.summary,
    },
  };
}

/**
 * Postman collection (v2.1) of every documented route, grouped by resource, generated from the route table.
 * `baseUrl` (an origin such as `http://127.0.0.1:8787`, no trailing slash) is the collection's default
 * `{{baseUrl}}`: the serving process passes its own origin (RouteServices.publicOrigin).
 */
export function buildPostmanCollection(baseUrl: string = DEFAULT_SERVER) {
  const routes = documentedRoutes();
  const tags = [...new Set(routes.map((r) => r.tag))];
  return {
    info: {
      _postman_id: "4b1f7d0e-6a52-4c3e-9d8b-ba11a57ba11a",
      name: "Ballast stablecoin analytics API",
      description: "Generated from the route declarations (api/routes). Set `apiKey` in the environment.",
      schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
    },
    item: tags.map((tag) => ({ name: tag, item: routes.filter((r) => r.tag === tag).map(item) })),
    variable: [{ key: "baseUrl", value: baseUrl }],
  };
}

/** Postman environment: `baseUrl` (the origin given, default the embedded `make run` one) and a secret `apiKey` to fill in. */
export function buildPostmanEnvironment(baseUrl: string = DEFAULT_SERVER) {
  return {
    id: "8f0c3b52-1d2e-4f6a-9b7c-ba11a57e0e01",
    name: "Ballast (local)",
    values: [
      { key: "baseUrl", value: baseUrl, type: "default", enabled: true },
      { key: "apiKey", value: "", type: "secret", enabled: true },
    ],
    _postman_variable_scope: "environment",
  };
}
