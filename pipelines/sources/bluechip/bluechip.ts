import { z } from "zod";
import { type HttpClient, UpstreamError } from "../http-client.ts";
import { RowCollector, toFiniteNumber } from "../parse-helpers.ts";
import type { Capture, Endpoint, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * Bluechip (bluechip.org) stablecoin safety ratings: one letter grade per rated coin. Assumed
 * upstream (shared/reference/upstreams.md §8; unofficial, no published contract): the site's backend
 * JSON `GET https://backend.bluechip.org/coin-data/{slug}` answers `{ data: [coin] }` for a rated
 * slug, 404 or `{ data: [] }` otherwise. Fields read from `coin`: `grade` (`A+` … `F`), `name`,
 * `symbol` (or `ticker`), `score` (0-100, when present), `date_of_rating` (report date),
 * `date_last_change`, `url` (report page; default `https://bluechip.org/en/coins/{slug}`). Unknown
 * fields (collateralization, SMIDGE summaries) are ignored. The base URL is configurable
 * (`BALLAST_BLUECHIP_URL`) so tests and mirrors can stand in.
 */
export const BLUECHIP_BASE_URL = "https://backend.bluechip.org/";

/** Public report page of a slug (when the record carries no `url`). */
export const BLUECHIP_REPORT_BASE = "https://bluechip.org/en/coins/";

/**
 * Slugs the live capture asks for (`BALLAST_BLUECHIP_SLUGS` overrides, comma-separated): Bluechip's
 * coverage of coins we also track, as listed by the leading public implementation (Pharos
 * `docs/bluechip-ratings.md`). A slug the upstream does not rate answers 404; that capture is
 * skipped and logged, never synthesized.
 */
export const BLUECHIP_SLUGS: readonly string[] = [
  "usdc",
  "usdt",
  "dai",
  "lusd",
  "bold",
  "pyusd",
  "paxg",
  "xaut",
  "gusd",
  "usdp",
  "eurc",
  "fdusd",
  "frax",
  "gho",
  "tusd",
  "rlusd",
  "xsgd",
  "ousd",
  "cetes",
];

/** Bluechip is a primary, independent upstream family (its own analysts' ratings). */
export const BLUECHIP_LINEAGE: SourceLineage = { family: "bluechip", derivedFrom: null };

/**
 * A rating is a snapshot observed at capture time; `date_of_rating` / `date_last_change` are calendar
 * days as published (read as UTC days; a full timestamp is reduced to its UTC day).
 */
export const BLUECHIP_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "snapshot at observedAt; report dates are the published calendar day (UTC)",
};

/** Letter grades Bluechip publishes, best first. */
export const BLUECHIP_GRADES = ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "D-", "F"] as const;

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** One rating row of `raw_bluechip__ratings` (one per slug and capture). */
const RatingRow = z.object({
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  name: z.string().min(1).nullable(),
  symbol: z.string().min(1).max(32),
  grade: z.enum(BLUECHIP_GRADES),
  score: z.number().min(0).max(100).nullable(),
  report_date: Day.nullable(),
  last_change_date: Day.nullable(),
  url: z.string().url(),
  observed_at: z.number().int(),
});

/** Envelope of one `coin-data/{slug}` answer: the record list only (a bad record costs one row). */
const CoinDataEnvelope = z.looseObject({ data: z.array(z.unknown()) });

const CoinRecord = z.looseObject({
  grade: z.unknown().optional(),
  name: z.unknown().optional(),
  symbol: z.unknown().optional(),
  ticker: z.unknown().optional(),
  score: z.unknown().optional(),
  date_of_rating: z.unknown().optional(),
  date_last_change: z.unknown().optional(),
  url: z.unknown().optional(),
});

const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);

/**
 * A published date → `YYYY-MM-DD` (UTC day): null when absent/empty, `undefined` when malformed.
 * A `YYYY-MM-DD` label is kept as the day it names; an ISO timestamp is reduced to its UTC day.
 */
export function bluechipDay(v: unknown): string | null | undefined {
  if (v === null || v === undefined || v === "") return null;
  if (typeof v !== "string") return undefined;
  const s = v.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) {
    const t = Date.parse(`${s}T00:00:00Z`);
    return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === s ? s : undefined;
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(s)) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) ? new Date(t).toISOString().slice(0, 10) : undefined;
}

/** Grade text normalised (`a+` → `A+`, `A−` → `A-`); undefined when it is not a Bluechip letter grade. */
export function bluechipGrade(v: unknown): (typeof BLUECHIP_GRADES)[number] | undefined {
  if (typeof v !== "string") return undefined;
  const g = v
    .trim()
    .toUpperCase()
    .replace(/[\u2212\u2013]/g, "-");
  return (BLUECHIP_GRADES as readonly string[]).includes(g) ? (g as (typeof BLUECHIP_GRADES)[number]) : undefined;
}

/**
 * Fetches one slug's `coin-data` record through the source's client (timeout, retries on 429/5xx,
 * circuit breaker). Throws UpstreamError naming the source and slug on a failed call (404 included,
 * `status` set), a non-JSON body, or a body that is not a `{ data: [...] }` record list.
 */
export async function fetchBluechipCoin(client: HttpClient, slug: string): Promise<unknown> {
  const path = `coin-data/${encodeURIComponent(slug)}`;
  const body = await client.getJson(path);
  const env = CoinDataEnvelope.safeParse(body);
  if (!env.success) {
    const issue = env.error.issues[0];
    throw new UpstreamError(
      `bluechip: ${path} returned a payload that is not a coin-data record list (${issue?.path.join(".") || "root"}: ${issue?.message ?? "invalid"})`,
      "bluechip",
    );
  }
  return body;
}

/**
 * `GET coin-data/{slug}` (params `{ slug }`), one capture per slug — snapshot mode: the newest capture
 * of each slug observed at or before as-of is its current rating, so a slug whose latest fetch failed
 * keeps its previous rating (each row carries `observed_at`). Payload `{ data: [coin] }` (only the
 * first record is the slug's rating; more are counted `extra-record`). One row per slug; a record
 * without a valid grade, with a malformed date, score or symbol is dropped and counted by reason
 * (`coin-data-empty`, `coin-record-invalid`, `grade-missing`, `grade-invalid`, `report-date-invalid`,
 * `score-invalid`, `symbol-missing`, …). The symbol is the record's `symbol` (or `ticker`), else the
 * slug upper-cased (Bluechip slugs are the coin's lower-case ticker). Stablecoin ids are joined in
 * SQL (mart `bluechip_ratings`), never here.
 */
export const bluechipRatingsEndpoint: Endpoint = {
  key: "bluechip.ratings",
  source: "bluechip",
  lineage: BLUECHIP_LINEAGE,
  time: BLUECHIP_TIME,
  mode: "snapshot",
  maxStalenessSec: 36 * 3600,
  payloadSchema: CoinDataEnvelope,
  rowSchema: RatingRow,
  table: {
    name: "raw_bluechip__ratings",
    columns: {
      slug: "VARCHAR",
      name: "VARCHAR",
      symbol: "VARCHAR",
      grade: "VARCHAR",
      score: "DOUBLE",
      report_date: "VARCHAR",
      last_change_date: "VARCHAR",
      url: "VARCHAR",
      observed_at: "BIGINT",
    },
  },
  toRows(payload: { data: unknown[] }, capture: Capture, out?: RowSink) {
    const rc = new RowCollector(RatingRow, out);
    const slug = (capture.params.slug ?? "").trim().toLowerCase();
    if (!slug) {
      rc.drop("slug-missing", Math.max(payload.data.length, 1));
      return rc.result();
    }
    if (payload.data.length === 0) {
      rc.drop("coin-data-empty");
      return rc.result();
    }
    if (payload.data.length > 1) rc.drop("extra-record", payload.data.length - 1);
    const p = CoinRecord.safeParse(payload.data[0]);
    if (!p.success || typeof payload.data[0] !== "object" || Array.isArray(payload.data[0])) {
      rc.drop("coin-record-invalid");
      return rc.result();
    }
    const c = p.data;
    if (c.grade === null || c.grade === undefined || c.grade === "") {
      rc.drop("grade-missing");
      return rc.result();
    }
    const grade = bluechipGrade(c.grade);
    if (!grade) {
      rc.drop("grade-invalid");
      return rc.result();
    }
    const reportDate = bluechipDay(c.date_of_rating);
    const lastChange = bluechipDay(c.date_last_change);
    if (reportDate === undefined || lastChange === undefined) {
      rc.drop("report-date-invalid");
      return rc.result();
    }
    const score = toFiniteNumber(c.score);
    if (score === undefined || (score !== null && (score < 0 || score > 100))) {
      rc.drop("score-invalid");
      return rc.result();
    }
    const symbol =
      c.symbol !== undefined && c.symbol !== null
        ? text(c.symbol)
        : c.ticker !== undefined && c.ticker !== null
          ? text(c.ticker)
          : slug.toUpperCase();
    if (!symbol) {
      rc.drop("symbol-missing");
      return rc.result();
    }
    rc.add({
      slug,
      name: text(c.name),
      symbol,
      grade,
      score,
      report_date: reportDate,
      last_change_date: lastChange,
      url: text(c.url) ?? `${BLUECHIP_REPORT_BASE}${encodeURIComponent(slug)}`,
      observed_at: capture.observedAt,
    });
    return rc.result();
  },
  fetchLive: (client, params) => fetchBluechipCoin(client, params.slug),
};

/** Slugs of the live capture: `BALLAST_BLUECHIP_SLUGS` (comma-separated) when set, else BLUECHIP_SLUGS. */
export function bluechipSlugs(configured?: string): string[] {
  const list = configured
    ? configured
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean)
    : [...BLUECHIP_SLUGS];
  return [...new Set(list)];
}
