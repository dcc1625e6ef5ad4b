import { z } from "zod";
import { num, sqlArtifact } from "./contract.ts";

/** Bluechip letter grades, best first. */
const Grade = z.enum(["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "D-", "F"]);
const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/**
 * One Bluechip rating joined to a registry stablecoin id. `grade` is Bluechip's letter grade;
 * `score` its numeric score (0-100) when the upstream publishes one, else null; `reportDate` /
 * `lastChangeDate` the published rating and last grade-change days (`YYYY-MM-DD`, null when not
 * published); `url` the report page; `observedAt` when the rating was fetched (Unix s).
 */
export const BluechipRatingSchema = z.object({
  stablecoinId: z.string(),
  slug: z.string(),
  name: z.string().nullable(),
  symbol: z.string(),
  grade: Grade,
  score: z.number().min(0).max(100).nullable(),
  reportDate: Day.nullable(),
  lastChangeDate: Day.nullable(),
  url: z.string(),
  observedAt: z.number().int(),
});

/**
 * A rating no registry coin was matched to, with the reason: `unknown-symbol` (no registry coin has
 * the symbol), `ambiguous-symbol` (several have it and the name picks none or several; `candidates`
 * lists them) or `duplicate-stablecoin` (two ratings resolve to one coin). Never guessed.
 */
export const BluechipUnmatchedSchema = z.object({
  slug: z.string(),
  name: z.string().nullable(),
  symbol: z.string(),
  grade: Grade,
  reason: z.enum(["unknown-symbol", "ambiguous-symbol", "duplicate-stablecoin"]),
  candidates: z.array(z.string()),
  url: z.string(),
  observedAt: z.number().int(),
});

/** `site-data/bluechip-ratings.json`; `updatedAt` is the newest rating fetch (Unix s). */
export const BluechipRatingsSchema = z.object({
  ratings: z.array(BluechipRatingSchema),
  unmatched: z.array(BluechipUnmatchedSchema),
  updatedAt: z.number().int(),
});
export type BluechipRatings = z.infer<typeof BluechipRatingsSchema>;

/**
 * `site-data/bluechip-ratings.json` — third-party (Bluechip) safety ratings joined to stablecoin ids
 * (mart `bluechip_ratings`). Optional: published only when a build holds at least one rating
 * capture, so without one no file exists and `/api/bluechip-ratings` answers 503
 * `Data not yet available: bluechip-ratings` (spec 7 rule 3) — no rating is ever invented.
 * Ratings sorted by stablecoin id, unmatched by slug.
 */
export const bluechipRatingsArtifact = sqlArtifact(import.meta.url, {
  key: "bluechip-ratings",
  schemaVersion: "1.0.0",
  maxAgeSec: 43_200,
  optional: true,
  description: "Bluechip safety ratings joined to stablecoin ids (published once a rating capture exists).",
  path: "site-data/bluechip-ratings.json",
  schema: BluechipRatingsSchema,
  sql: "bluechip_ratings",
  shape: "many",
  // matched ratings by id, unmatched ones with their candidates (a comma list in SQL)
  transform: (all: Record<string, unknown>[], ctx) => {
    const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
    const ratings = all
      .filter((r) => r.stablecoin_id !== null && r.stablecoin_id !== undefined)
      .map((r) => ({
        stablecoinId: String(r.stablecoin_id),
        slug: String(r.slug),
        name: str(r.name),
        symbol: String(r.symbol),
        grade: r.grade,
        score: num(r.score),
        reportDate: str(r.report_date),
        lastChangeDate: str(r.last_change_date),
        url: String(r.url),
        observedAt: Number(r.observed_at),
      }))
      .sort((a, b) => a.stablecoinId.localeCompare(b.stablecoinId));
    const unmatched = all
      .filter((r) => r.stablecoin_id === null || r.stablecoin_id === undefined)
      .map((r) => ({
        slug: String(r.slug),
        name: str(r.name),
        symbol: String(r.symbol),
        grade: r.grade,
        reason: r.unmatched_reason,
        candidates: r.candidate_ids ? String(r.candidate_ids).split(",") : [],
        url: String(r.url),
        observedAt: Number(r.observed_at),
      }));
    const updatedAt = ctx.sourceObservedAt["bluechip.ratings"] ?? Math.max(...all.map((r) => Number(r.observed_at)));
    return { ratings, unmatched, updatedAt };
  },
  dataAsOf: (payload: { updatedAt: number }) => payload.updatedAt,
});
