import { z } from "zod";

/** Registry of named response schemas: `id` is the `components/schemas` key. */
type Named = z.core.$ZodRegistry<{ id: string }>;

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("");

/** Child schemas of a zod schema with the property name that leads to each (`undefined`: same place as the parent). */
function children(s: z.core.$ZodType): [z.core.$ZodType, string | undefined][] {
  const out: [z.core.$ZodType, string | undefined][] = [];
  const def = s._zod.def as unknown as Record<string, unknown>;
  const isSchema = (v: unknown): v is z.core.$ZodType => typeof v === "object" && v !== null && "_zod" in v;
  for (const [key, v] of Object.entries(def)) {
    if (key === "shape" && v && typeof v === "object") {
      for (const [prop, c] of Object.entries(v)) if (isSchema(c)) out.push([c, prop]);
    } else if (key === "getter" && typeof v === "function") {
      const c: unknown = v();
      if (isSchema(c)) out.push([c, undefined]);
    } else if (isSchema(v)) out.push([v, key === "element" || key === "valueType" ? "item" : undefined]);
    else if (Array.isArray(v)) for (const c of v) if (isSchema(c)) out.push([c, undefined]);
  }
  return out;
}

/**
 * Names response schemas for `components/schemas`: each route's response schema under its given name (the first
 * name wins when routes share one schema object), and every object schema that occurs more than once across them
 * (same zod object, e.g. a row shape reused by two routes) under `<Owner><Property>`, so it is written once and
 * `$ref`ed. Returns the registry to pass to {@link componentSchemas}.
 */
export function nameResponseSchemas(roots: [string, z.ZodType][]): Named {
  const reg: Named = z.registry<{ id: string }>();
  const taken = new Set<string>();
  const unique = (name: string) => {
    let n = name;
    for (let i = 2; taken.has(n); i++) n = `${name}${i}`;
    taken.add(n);
    return n;
  };
  for (const [name, s] of roots) if (!reg.has(s)) reg.add(s, { id: unique(pascal(name)) });
  // first pass: occurrences of each object schema; second pass: name the shared ones after their first owner
  const count = new Map<z.core.$ZodType, number>();
  const firstSeen = new Map<z.core.$ZodType, string>();
  const walk = (s: z.core.$ZodType, owner: string, prop: string, stack: Set<z.core.$ZodType>) => {
    if (stack.has(s)) return;
    if (s._zod.def.type === "object") {
      count.set(s, (count.get(s) ?? 0) + 1);
      if (!firstSeen.has(s)) firstSeen.set(s, owner + pascal(prop));
      if ((count.get(s) ?? 0) > 1) return; // its subtree was counted on the first visit
    }
    stack.add(s);
    const named = reg.get(s)?.id;
    for (const [c, p] of children(s)) walk(c, named ?? owner, named ? (p ?? "") : prop + pascal(p ?? ""), stack);
    stack.delete(s);
  };
  for (const [name, s] of roots) walk(s, reg.get(s)?.id ?? pascal(name), "", new Set());
  for (const [s, n] of count) if (n > 1 && !reg.has(s)) reg.add(s, { id: unique(firstSeen.get(s) ?? "Shape") });
  return reg;
}

/**
 * JSON Schemas (draft 2020-12, output side) of every named schema, keyed by name, each referring to the others as
 * `#/components/schemas/<Name>`. Unrepresentable parts (custom checks) become `{}`; never throws on them.
 */
export function componentSchemas(reg: Named): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(reg, {
    target: "draft-2020-12",
    unrepresentable: "any",
    io: "output",
    uri: (id) => `#/components/schemas/${id}`,
  });
  const out: Record<string, unknown> = {};
  for (const [id, s] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, id: _d, ...rest } = s as Record<string, unknown>;
    out[id] = rest;
  }
  return out;
}
