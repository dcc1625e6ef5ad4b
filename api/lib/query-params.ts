import { z } from "zod";

/**
 * What a query parameter IS, as the OpenAPI description states it (an OpenAPI 3.1 Schema Object fragment):
 * `type` `integer` with `minimum`/`maximum` (and `default` when the declaration applies one), or `boolean` with
 * its `default`. Query values arrive as strings, so the zod schema parses a string; this records the typed view
 * of the same declaration; a default the declaration applies with zod's `.default(v)` is added by
 * {@link declaredParamType}. Read by api/openapi.ts and api/ops-openapi.ts through {@link declaredParamType}.
 */
export type QueryParamType =
  | { type: "integer"; minimum: number; maximum: number }
  | { type: "boolean"; default?: boolean };

/** Registry of the typed view of each helper-built parameter (zod registries inherit entries through `.describe()`). */
export const queryParamTypes = z.registry<QueryParamType>();

/**
 * Integer query parameter in [min, max], given as decimal digits. Every failure has one message
 * that states the accepted range (`must be an integer from 1 to 1000`), so a 400 names the
 * parameter and what it accepts, never a number-type limit. Documented as `type: integer, minimum, maximum`.
 */
export const intParam = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`;
  return z
    .string({ error: message })
    .regex(/^\d{1,15}$/, message)
    .transform(Number)
    .refine((n) => n >= min && n <= max, message)
    .register(queryParamTypes, { type: "integer", minimum: min, maximum: max });
};

/** Boolean query parameter `true`/`false`, `def` when absent. Documented as `type: boolean, default`. */
export const boolParam = (def: boolean) =>
  z
    .enum(["true", "false"], { error: "must be true or false" })
    .optional()
    .transform((v) => (v === undefined ? def : v === "true"))
    .register(queryParamTypes, { type: "boolean", default: def });

/** Required `stablecoin` query parameter: a canonical stablecoin id (an unknown id is the route's 404). */
export const stablecoinParam = () =>
  z.string({ error: "required" }).max(200, "must be at most 200 characters").describe("Canonical stablecoin id");

/**
 * OpenAPI Schema Object of a query or path parameter, from its zod declaration: the {@link QueryParamType} a helper
 * registered (found on the schema or, through `.optional()`/`.default()`/pipes, on what it wraps), with the
 * `default` of a zod `.default(v)` wrapper, else the JSON Schema of the accepted string (`enum`, `pattern`, `maxLength`, `const`).
 * A string enum of exactly `true`/`false` is `type: boolean`. Never throws (unrepresentable parts become `{}`).
 */
export function declaredParamType(s: z.ZodType): Record<string, unknown> {
  let found: QueryParamType | undefined;
  let fallback: { default: unknown } | undefined;
  let cur: z.core.$ZodType | undefined = s;
  while (cur && !found) {
    found = queryParamTypes.get(cur);
    const def: z.core.$ZodTypeDef = cur._zod.def;
    if (def.type === "default") fallback ??= { default: (def as z.core.$ZodDefaultDef).defaultValue };
    if (def.type === "optional" || def.type === "nullable" || def.type === "default") {
      cur = (def as z.core.$ZodOptionalDef).innerType;
    } else if (def.type === "pipe") cur = (def as z.core.$ZodPipeDef).in;
    else cur = undefined;
  }
  if (found) return { ...found, ...fallback };
  const {
    $schema: _s,
    description: _d,
    ...json
  } = z.toJSONSchema(s, {
    target: "draft-2020-12",
    unrepresentable: "any",
    io: "input",
  }) as Record<string, unknown>;
  const values = json.enum;
  if (Array.isArray(values) && values.length === 2 && values.includes("true") && values.includes("false")) {
    return { type: "boolean" };
  }
  return json;
}
