import { z } from "zod";
import { ReserveCompositionSchema } from "../pipelines/registry/schema.ts";
import { sqlArtifact } from "./contract.ts";
import { must } from "../lib/must.ts";

/** The newest live reading of a coin (adapter, issuer's report time, observation time, budget, components). */
export const LiveReservesSchema = z.object({
  adapter: z.string(),
  reportedAt: z.number().int(),
  observedAt: z.number().int(),
  /** Budget (s): a reading observed longer ago than this is served `live-stale`. */
  maxAgeSec: z.number().int().positive(),
  totalUsd: z.number().positive(),
  components: z.array(z.object({ name: z.string(), pct: z.number(), valueUsd: z.number() })),
});

/** Stored file: per coin, the newest live reading and the curated fallback composition (either may be null, not both). */
export const StablecoinReservesStoredSchema = z.object({
  coins: z.record(
    z.string(),
    z.object({ live: LiveReservesSchema.nullable(), fallback: ReserveCompositionSchema.nullable() }),
  ),
  updatedAt: z.number().int(),
});
export type StablecoinReservesStored = z.infer<typeof StablecoinReservesStoredSchema>;

/**
 * `/api/stablecoin-reserves/{stablecoinId}` body: `mode` `live` (a live adapter's reading observed within
 * its budget), `live-stale` (older), `fallback` (the curated composition of the registry: the Pharos core
 * extract's `reserves`, undated). Components: name, share in percent, risk tier (curated; null for live
 * readings, which carry none) and USD value (live only; null in fallback).
 */
export const StablecoinReservesResponseSchema = z.object({
  stablecoinId: z.string(),
  mode: z.enum(["live", "live-stale", "fallback"]),
  components: z.array(
    z.object({
      name: z.string(),
      pct: z.number(),
      risk: z.enum(["very-low", "low", "medium", "high", "very-high"]).nullable(),
      valueUsd: z.number().nullable(),
    }),
  ),
  totalUsd: z.number().nullable(),
  source: z.object({
    kind: z.enum(["live-adapter", "curated"]),
    adapter: z.string().nullable(),
    label: z.string(),
    url: z.string().nullable(),
  }),
  /** Live readings: issuer's report time, observation time (Unix s), age at service time and budget (s); null in fallback. */
  reportedAt: z.number().int().nullable(),
  observedAt: z.number().int().nullable(),
  ageSeconds: z.number().int().nullable(),
  maxAgeSec: z.number().int().nullable(),
  updatedAt: z.number().int(),
});
export type StablecoinReservesResponse = z.infer<typeof StablecoinReservesResponseSchema>;

/** A row of stablecoin_reserves.sql: the coin, its live reading without components (or null), the JSON documents. */
type ReservesRow = {
  stablecoin_id: string;
  live: Omit<z.infer<typeof LiveReservesSchema>, "components"> | null;
  components_json: string | null;
  reserves_json: string | null;
};

/** `site-data/stablecoin-reserves.json` — live readings and curated compositions of every coin that has either. */
export const stablecoinReservesArtifact = sqlArtifact(import.meta.url, {
  key: "stablecoin-reserves",
  schemaVersion: "1.0.0",
  maxAgeSec: 86400,
  description: "Reserve compositions: newest live adapter reading and curated fallback per coin.",
  path: "site-data/stablecoin-reserves.json",
  schema: StablecoinReservesStoredSchema,
  sql: "stablecoin_reserves",
  shape: "many",
  // entries keyed by coin; the components and the curated composition are JSON documents
  transform: (rows: ReservesRow[], ctx): StablecoinReservesStored => ({
    coins: Object.fromEntries(
      rows.map((r) => [
        r.stablecoin_id,
        {
          live: r.live && { ...r.live, components: JSON.parse(must(r.components_json, "live components")) },
          fallback: r.reserves_json == null ? null : JSON.parse(r.reserves_json),
        },
      ]),
    ),
    updatedAt: ctx.asOf,
  }),
});

/**
 * The response for one coin's stored entry at service time `now`: `live` when a live reading was observed
 * within its budget, `live-stale` when older, else `fallback` (the curated composition).
 */
export function reservesResponse(
  id: string,
  entry: StablecoinReservesStored["coins"][string],
  now: number,
  updatedAt: number,
): StablecoinReservesResponse {
  if (entry.live) {
    const l = entry.live;
    const age = Math.max(0, now - l.observedAt);
    return {
      stablecoinId: id,
      mode: age <= l.maxAgeSec ? "live" : "live-stale",
      components: l.components.map((c) => ({ name: c.name, pct: c.pct, risk: null, valueUsd: c.valueUsd })),
      totalUsd: l.totalUsd,
      source: { kind: "live-adapter", adapter: l.adapter, label: `live adapter ${l.adapter}`, url: null },
      reportedAt: l.reportedAt,
      observedAt: l.observedAt,
      ageSeconds: age,
      maxAgeSec: l.maxAgeSec,
      updatedAt,
    };
  }
  // A stored entry has a live reading or a curated composition (or both).
  const f = must(entry.fallback, `curated reserves of ${id}`);
  return {
    stablecoinId: id,
    mode: "fallback",
    components: f.components.map((c) => ({ ...c, valueUsd: null })),
    totalUsd: null,
    source: { kind: "curated", adapter: null, label: f.source.label, url: f.source.url },
    reportedAt: null,
    observedAt: null,
    ageSeconds: null,
    maxAgeSec: null,
    updatedAt,
  };
}
