import { z } from "zod";
import {
  PsiCurrentSchema,
  PsiDetailRowSchema,
  stabilityIndexArtifact,
  StabilityIndexResponseSchema,
  type StabilityIndexStoredSchema,
} from "../../site-data/stability-index.ts";
import {
  DewsCoinHistoryRowSchema,
  DewsCoinSchema,
  DewsSummarySchema,
  DewsUniverseHistoryRowSchema,
  type StressSignalsFile,
  stressSignalsArtifact,
} from "../../site-data/stress-signals.ts";
import { MethodologySchema } from "../../site-data/peg-summary.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import { boolParam, intParam } from "../lib/query-params.ts";
import { artifactPayload, bind, need, type RouteDecl } from "./route.ts";

/** Declared with its description in risk.ts. */
const tag = "risk";
const DAY = 86400;

/** Query of `/api/stability-index`. */
export const StabilityIndexQuery = z.object({
  detail: boolParam(false).describe("true: every daily row with `components`, plus `malformedRows`"),
  days: intParam(1, 5000).optional().describe("Last N daily rows, 1-5000 (default: 91; with `detail=true`: all)"),
});

/** Query of `/api/stress-signals`. */
export const StressSignalsQuery = z.object({
  stablecoin: z
    .string()
    .max(200, "must be at most 200 characters")
    .optional()
    .describe("Canonical stablecoin id; unknown ids are 404"),
  days: intParam(1, 365).default(30).describe("History days ending at the as-of day, 1-365 (default 30)"),
});

/** `/api/stress-signals` body: the universe, or one coin with `stablecoin`. */
export const StressSignalsResponseSchema = z.discriminatedUnion("scope", [
  z.object({
    scope: z.literal("universe"),
    coins: z.array(DewsCoinSchema),
    summary: DewsSummarySchema,
    history: z.array(DewsUniverseHistoryRowSchema),
    methodology: MethodologySchema,
  }),
  z.object({
    scope: z.literal("coin"),
    stablecoinId: z.string(),
    current: DewsCoinSchema.nullable(),
    /** Why `current` is null: `nav-token`, `floating-peg` (never scored) or `no-score-on-as-of-day` (available weight < 0.30 or no input that day). */
    unavailableReason: z.enum(["nav-token", "floating-peg", "no-score-on-as-of-day"]).nullable(),
    history: z.array(DewsCoinHistoryRowSchema),
    methodology: MethodologySchema,
  }),
]);

export const DEFAULT_PSI_DAYS = 91;

/**
 * Shapes the stored index for a request. Rows failing their schema are dropped and counted
 * (`malformedRows`, detail mode); a present but malformed `current` (components missing) is 503.
 */
export function stabilityIndexPage(
  stored: z.infer<typeof StabilityIndexStoredSchema>,
  q: z.output<typeof StabilityIndexQuery>,
) {
  const current = stored.current === null ? null : PsiCurrentSchema.safeParse(stored.current);
  if (current !== null && !current.success)
    throw notYetAvailable("stability-index (canonical components missing or malformed)");
  const rows: z.infer<typeof PsiDetailRowSchema>[] = [];
  let malformed = 0;
  for (const r of stored.history) {
    const p = PsiDetailRowSchema.safeParse(r);
    if (p.success) rows.push(p.data);
    else malformed++;
  }
  const n = q.days ?? (q.detail ? rows.length : DEFAULT_PSI_DAYS);
  const kept = rows.slice(Math.max(0, rows.length - n));
  return {
    current: current?.data ?? null,
    history: q.detail ? kept : kept.map(({ components: _c, ...h }) => h),
    ...(q.detail ? { malformedRows: malformed } : {}),
    methodology: stored.methodology,
  };
}

/** Universe or one coin of the stress-signals file for `days` ending at the file's as-of day. */
export function stressSignalsPage(file: StressSignalsFile, q: z.output<typeof StressSignalsQuery>) {
  const from = file.summary.date - (q.days - 1) * DAY;
  if (q.stablecoin === undefined) {
    return {
      scope: "universe" as const,
      coins: file.coins,
      summary: file.summary,
      history: file.universeHistory.filter((h) => h.date >= from),
      methodology: file.methodology,
    };
  }
  const id = q.stablecoin;
  if (!Object.hasOwn(file.stablecoinIds, id)) throw new HttpError(404, `Unknown stablecoin id: ${id}`);
  const current = file.coins.find((c) => c.stablecoinId === id) ?? null;
  return {
    scope: "coin" as const,
    stablecoinId: id,
    current,
    unavailableReason: current ? null : (file.stablecoinIds[id] ?? "no-score-on-as-of-day"),
    history: (Object.hasOwn(file.history, id) ? file.history[id] : []).filter((h) => h.date >= from),
    methodology: file.methodology,
  };
}

/** Risk outputs: the stability index and stress signals (DEWS). */
export const RISK_SIGNAL_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getStabilityIndex",
    method: "GET",
    path: "/api/stability-index",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(stabilityIndexArtifact),
    query: StabilityIndexQuery,
    response: StabilityIndexResponseSchema,
    summary: "Stability index (PSI): current reading and daily history",
    description:
      "Spec 2.10, methodology `ballast-stability-index-v1`: one 0-100 reading per UTC day (the 24 h ending at the next midnight, cut at as-of) = clamp(100 − severity (≤ 68) − breadth (≤ 17) − stressBreadth (≤ 5) + trend (±5)); bands BEDROCK ≥ 90, STEADY ≥ 75, TREMOR ≥ 60, FRACTURE ≥ 40, CRISIS ≥ 20, MELTDOWN < 20. `current` is the reading of the day ending at the build's as-of (null when that day has no market cap); `avg24h` is the hour-weighted mean of the readings covering the 24 h before as-of (equal to `score` when as-of is at midnight). `history`: the last 91 daily rows by default (oldest first, `date` = Unix s of 00:00 UTC), the last `days` rows when given, every row with `components` and `malformedRows` when `detail=true`. 503 when the index is not published or its current components are missing or malformed.",
    async handler(ctx, route) {
      const { value, path } = await artifactPayload<z.infer<typeof StabilityIndexStoredSchema>>(route, ctx);
      const q = ctx.query as z.output<typeof StabilityIndexQuery>;
      return { payload: stabilityIndexPage(value, q), dataAsOf: need(ctx.build).dataAsOf(path) };
    },
  },
  {
    kind: "json",
    operationId: "getStressSignals",
    method: "GET",
    path: "/api/stress-signals",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(stressSignalsArtifact),
    query: StressSignalsQuery,
    response: StressSignalsResponseSchema,
    summary: "Stress signals (DEWS) for the universe or one stablecoin",
    description:
      "Depeg early-warning score `ballast-dews-v1` per coin for the day ending at the build's as-of: 0-100 with band (CALM 0-15, WATCH 16-35, ALERT 36-55, WARNING 56-75, DANGER 76-100), the base before the stability-index and same-peg contagion amplifiers, each signal's value, weight and availability (supply velocity, price confidence, divergence, blacklist spikes, mint/burn flow; pool drift, liquidity erosion and yield have no input and are always unavailable, never zero), and the signals that drove it. No score when the available weight is under 0.30. Without `stablecoin`: every scored coin, a band summary and the universe's daily history; with `stablecoin` (canonical id, unknown is 404): that coin and its daily history. `days` 1-365 (default 30) bounds the history.",
    async handler(ctx, route) {
      const { value, path } = await artifactPayload<StressSignalsFile>(route, ctx);
      const q = ctx.query as z.output<typeof StressSignalsQuery>;
      return {
        payload: await need(ctx.build).memo(`stress:${q.stablecoin ?? ""}:${q.days}`, () =>
          stressSignalsPage(value, q),
        ),
        dataAsOf: need(ctx.build).dataAsOf(path),
      };
    },
  },
];
