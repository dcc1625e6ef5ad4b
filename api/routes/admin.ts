import { z } from "zod";
import { depegLedgerArtifact, DepegLedgerSchema } from "../../site-data/depeg-events.ts";
import { SNAPSHOT_INDEX_KEY, SnapshotIndexSchema, storedJson } from "../../site-data/snapshot.ts";
import { serviceNow } from "../lib/clock.ts";
import type { UnreviewedCoin } from "../lib/discovery.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { JobCommand, JobRecord } from "../lib/jobs.ts";
import {
  type ApiKeyListing,
  type ApiKeyRecord,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  ISSUABLE_TIERS,
  maskToken,
  RATE_LIMIT_MAX,
  RATE_LIMIT_MIN,
} from "../lib/key-store.ts";
import {
  type AdminContext,
  type AdminResult,
  auditChange,
  changeOf,
  type OperatorChange,
} from "../lib/ops-services.ts";
import { boolParam, intParam } from "../lib/query-params.ts";
import { DEPEG_AUDIT_RESULT, DEWS_VALIDATION_RESULT, depegAudit, dewsValidation } from "./depeg-audit.ts";
import { HISTORY_BACKFILL_RESULT, historyBackfill, servingStablecoinList } from "./history-backfills.ts";
import {
  backfillMintBurnPrices,
  checkFreezeFilter,
  checkSupplyConfigKey,
  MINT_BURN_PRICES_RESULT,
  RECLASSIFY_RESULT,
  reclassifyAtomicRoundtrips,
} from "./ledger-jobs.ts";
import type { AdminRoute } from "./route.ts";

/**
 * Operator (admin) path families of spec 4.5. They live on the operator host only: on the public
 * host every path in these families is 404 before key authentication (spec 5.2), so a public key
 * cannot reach them. An entry ending in `-` is a prefix family (`/api/backfill-…`); others match the
 * path and everything under it.
 */
export const ADMIN_PATH_FAMILIES = [
  "/api/admin",
  "/api/api-keys",
  "/api/backfill-",
  "/api/reclassify-atomic-roundtrips",
  "/api/audit-depeg-history",
  "/api/trigger-digest",
  "/api/reset-blacklist-sync",
  "/api/remediate-blacklist-amount-gaps",
  "/api/discovery-candidates",
  "/api/debug-sync-state",
];

const tag = "admin";

// ---------------------------------------------------------------------------------------------------
// Parameters (spec 4.5 names and bounds; query strings, except the api-key bodies)

const text = (max: number, what: string) =>
  z.string().trim().min(1, `must be 1 to ${max} characters`).max(max, `must be 1 to ${max} characters`).describe(what);
const optInt = (min: number, max: number, def: number, what: string) =>
  intParam(min, max).default(def).describe(`${what} (${min}-${max}, default ${def})`);
const trueOnly = (what: string) => z.literal("true", { error: "must be true" }).describe(what);
const nonNegNumber = (def: number, what: string) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, "must be a non-negative number")
    .transform(Number)
    .optional()
    .transform((v) => v ?? def)
    .describe(`${what} (≥ 0, default ${def})`);
const dayParam = (what: string) =>
  z
    .string()
    .regex(/^(\d{4}-\d{2}-\d{2}|\d{1,12})$/, "must be YYYY-MM-DD or an integer Unix second")
    .optional()
    .describe(what);
const keyId = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a key id")
    .describe("API key id"),
});

const emailField = z
  .string()
  .trim()
  .toLowerCase()
  .max(200, "must be at most 200 characters")
  .regex(/^[^\s@]+@[^\s@]+$/, "must be an email address");
const keyFields = {
  name: text(80, "Key name (1-80 characters)"),
  ownerEmail: emailField.nullable().describe("Owner email (≤ 200 characters)"),
  tier: z
    .enum(ISSUABLE_TIERS, { error: `must be one of ${ISSUABLE_TIERS.join(", ")}` })
    .describe("Tier (`standard` or `donor`; self-serve issuance is retired)"),
  rateLimitPerMinute: z
    .number({ error: "must be an integer" })
    .int("must be an integer")
    .min(RATE_LIMIT_MIN, `must be from ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}`)
    .max(RATE_LIMIT_MAX, `must be from ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}`)
    .describe(`Requests per 60 s (${RATE_LIMIT_MIN}-${RATE_LIMIT_MAX}, default ${DEFAULT_RATE_LIMIT_PER_MINUTE})`),
};
const CreateKeyBody = z.strictObject({
  name: keyFields.name,
  ownerEmail: keyFields.ownerEmail.optional(),
  tier: keyFields.tier.default("standard"),
  rateLimitPerMinute: keyFields.rateLimitPerMinute.default(DEFAULT_RATE_LIMIT_PER_MINUTE),
});
const UpdateKeyBody = z
  .strictObject({
    name: keyFields.name.optional(),
    ownerEmail: keyFields.ownerEmail.optional(),
    tier: keyFields.tier.optional(),
    rateLimitPerMinute: keyFields.rateLimitPerMinute.optional(),
    isActive: z.boolean({ error: "must be true or false" }).optional().describe("false deactivates, true reactivates"),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: "give at least one of name, ownerEmail, tier, rateLimitPerMinute, isActive",
    path: ["body"],
  });

/** Query of backfill-stability-index: dry run (default true) and the day range. */
const BackfillStabilityIndexQuery = z.object({
  "dry-run": boolParam(true).describe("Only report the days that would be built (default true)"),
  startDay: dayParam("First day (YYYY-MM-DD or Unix s; default the earliest depeg day)"),
  endDay: dayParam("Last day (YYYY-MM-DD or Unix s; default and upper bound the last completed UTC day)"),
});
/** Query of the discovery candidates list: status filter and page. */
const DiscoveryCandidatesQuery = z.object({
  status: z
    .enum(["active", "dismissed", "all"], { error: "must be active, dismissed or all" })
    .default("active")
    .describe("`active` (default), `dismissed` or `all`"),
  limit: optInt(1, 200, 50, "Candidates per page"),
  offset: optInt(0, 100_000, 0, "Candidates to skip"),
});
/** Body of the maintenance switch. */
const MaintenanceBody = z.strictObject({
  enabled: z.boolean({ error: "must be true or false" }).describe("Turn maintenance mode on or off"),
  message: z
    .string()
    .trim()
    .max(500, "must be at most 500 characters")
    .optional()
    .describe("Message of the 503 answer (default: a brief-maintenance notice)"),
});

const stablecoinQ = () => text(200, "Stablecoin id (or symbol where the job accepts one)").optional();
const AuditQuery = {
  limit: optInt(1, 100_000, 200, "Events per page"),
  offset: optInt(0, 100_000, 0, "Events to skip"),
  "min-supply": nonNegNumber(0, "Minimum circulating USD of the coin"),
  symbol: text(40, "Only this coin symbol").optional(),
  repair: z
    .enum(["synthetic-splits"], { error: "must be synthetic-splits" })
    .optional()
    .describe("Repair mode (`synthetic-splits`)"),
};

// ---------------------------------------------------------------------------------------------------
// Helpers

/** A key as operators see it: the record with owner, creation time and the masked token only. */
const listing = (k: ApiKeyListing) => ({
  id: k.id,
  name: k.name,
  ownerEmail: k.ownerEmail,
  tier: k.tier,
  rateLimitPerMinute: k.rateLimitPerMinute,
  isActive: k.isActive,
  expiresAt: k.expiresAt,
  createdAt: k.createdAt,
  keyPrefix: k.keyPrefix,
  maskedToken: k.maskedToken,
});
/** A key as the operator log compares it. */
type KeyState = ApiKeyRecord & { ownerEmail?: string | null };

/**
 * The operator-log change of key `target` from `before` (null: created) to `after`: name, owner email,
 * tier, limit, active, expiry and prefix; an owner email is logged only as `(set)` or null.
 */
function keyChange(target: string, before: KeyState | null, after: KeyState): OperatorChange {
  const state = (k: KeyState) => ({
    name: k.name,
    ownerEmail: k.ownerEmail ?? null,
    tier: k.tier,
    rateLimitPerMinute: k.rateLimitPerMinute,
    isActive: k.isActive,
    expiresAt: k.expiresAt,
    keyPrefix: k.keyPrefix,
  });
  const change = before ? changeOf(target, state(before), state(after)) : { target, before: null, after: state(after) };
  for (const side of [change.before, change.after])
    if (side && "ownerEmail" in side) side.ownerEmail = side.ownerEmail === null ? null : "(set)";
  return change;
}
const recordView = (r: ApiKeyRecord) => ({
  id: r.id,
  name: r.name,
  tier: r.tier,
  rateLimitPerMinute: r.rateLimitPerMinute,
  isActive: r.isActive,
  expiresAt: r.expiresAt,
  keyPrefix: r.keyPrefix,
  maskedToken: maskToken(r.keyPrefix),
});

/** The answer of a finished job: its result (spec shape) on success, 400 when rejected, 500 when failed. */
function jobAnswer(r: JobRecord): AdminResult {
  if (r.status === "succeeded") return { body: r.result };
  if (r.status === "rejected") throw new HttpError(400, r.error ?? "rejected", {}, { requestId: r.requestId });
  throw new HttpError(500, `${r.action} failed: ${r.error ?? "unknown error"}`, {}, { requestId: r.requestId });
}

/**
 * Starts a job and answers its result when it finishes within the wait (default 4 s), else 202
 * `{ ok, accepted, requestId, status, statusPath }` (poll `GET /api/admin/jobs/:requestId`).
 */
async function runJob(
  ctx: AdminContext,
  action: string,
  cmd: JobCommand,
  params: unknown,
  group: "ledger" | "build",
): Promise<AdminResult> {
  const { record, done } = ctx.ops.jobs.start(action, cmd, params, group);
  const finished = await ctx.ops.jobs.waitBriefly(done, ctx.ops.jobWaitMs);
  if (finished) return jobAnswer(finished);
  return {
    status: 202,
    body: {
      ok: true,
      accepted: true,
      requestId: record.requestId,
      status: "running",
      statusPath: `/api/admin/jobs/${record.requestId}`,
    },
  };
}

/** `build/onchain-cli.ts <job> --ledger <path> --k v …` with the defined parameters. */
function onchainJob(ctx: AdminContext, job: string, params: Record<string, unknown>): Promise<AdminResult> {
  const args = [job, "--ledger", ctx.ops.ledgerPath];
  const passed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue;
    args.push(`--${k}`, String(v));
    passed[k] = v;
  }
  return runJob(ctx, job, { script: "build/onchain-cli.ts", args }, passed, "ledger");
}

/** The serving build's unreviewed coins (discovery candidates' source). @throws 503 without a build or list. */
async function unreviewedCoins(ctx: AdminContext): Promise<UnreviewedCoin[]> {
  const { list } = await servingStablecoinList(ctx);
  return list.peggedAssets
    .filter((a) => a.unreviewed === true)
    .map((a) => ({
      id: a.id,
      name: a.name,
      symbol: a.symbol,
      pegType: a.pegType,
      pegMechanism: a.pegMechanism,
      marketCapUsd: a.circulating[a.pegType] ?? null,
      chains: a.chains,
    }));
}

const DAY = 86_400;
const isoDay = (sec: number) => new Date(sec * 1000).toISOString().slice(0, 10);
/** A `startDay`/`endDay` value as a UTC day (`YYYY-MM-DD`): a date as given (checked), an integer as the Unix second's day. */
function dayOf(name: string, v: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) {
    const t = Date.parse(`${v}T00:00:00Z`);
    if (!Number.isFinite(t) || isoDay(t / 1000) !== v)
      throw new HttpError(400, `Invalid parameter ${name}: not a calendar date`);
    return v;
  }
  return isoDay(Number(v));
}

/**
 * backfill-stability-index: the PSI of a past day is part of that day's immutable snapshot, so the
 * rebuild is the dated-snapshot backfill (`build/cli.ts build --from --to`, days already published are
 * skipped). Defaults: earliest depeg day of the serving build → last completed UTC day (service
 * clock); `endDay` is clamped to it, so the current day is never written. `dry-run` (default true)
 * only reports the days that would be built.
 */
async function backfillStabilityIndex(ctx: AdminContext): Promise<AdminResult> {
  const build = await ctx.ops.store.build();
  const { now } = serviceNow(build, ctx.ops.clockMode, ctx.ops.nowMs());
  const lastCompleted = isoDay(Math.floor(now / DAY) * DAY - DAY);
  const q = ctx.query as z.output<typeof BackfillStabilityIndexQuery>;
  let start: string;
  if (q.startDay !== undefined) start = dayOf("startDay", q.startDay);
  else {
    const ledger =
      build &&
      (await build
        .payload(depegLedgerArtifact.outputs.main.path, (x) => DepegLedgerSchema.parse(x))
        .catch(() => undefined));
    if (!ledger) throw notYetAvailable("depeg-events (default startDay)");
    const first = ledger.events.reduce((m, e) => Math.min(m, e.startedAt), Infinity);
    if (!Number.isFinite(first))
      throw new HttpError(
        400,
        "Invalid parameter startDay: required (the serving build has no depeg incident to default from)",
      );
    start = isoDay(first);
  }
  const requestedEnd = q.endDay !== undefined ? dayOf("endDay", q.endDay) : lastCompleted;
  // Days are `YYYY-MM-DD` strings, compared as text (Math.min would not do).
  const clamped = requestedEnd > lastCompleted;
  const end = clamped ? lastCompleted : requestedEnd;
  if (start > end)
    throw new HttpError(
      400,
      `Invalid parameter startDay: ${start} is after endDay ${end} (the current UTC day is never written)`,
    );
  const dryRun = q["dry-run"];
  if (!dryRun) {
    return runJob(
      ctx,
      "backfill-stability-index",
      { script: "build/cli.ts", args: ["build", "--from", start, "--to", end] },
      { startDay: start, endDay: end },
      "build",
    );
  }
  const raw = await ctx.ops.store.object(SNAPSHOT_INDEX_KEY);
  const index = raw ? storedJson(raw, SnapshotIndexSchema) : null;
  const published = new Set(index?.snapshots.map((s) => s.snapshotDate) ?? []);
  const days: string[] = [];
  for (let t = Date.parse(`${start}T00:00:00Z`) / 1000; isoDay(t) <= end; t += DAY) days.push(isoDay(t));
  const wouldBuild = days.filter((d) => !published.has(d));
  return {
    body: {
      dryRun: true,
      startDay: start,
      endDay: end,
      endDayClamped: clamped,
      days: days.length,
      alreadyPublished: days.length - wouldBuild.length,
      wouldBuild,
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Route table

type Decl = Omit<AdminRoute, "kind" | "lane" | "tag">;
/** An operator route; the change its handler reports (`AdminResult.change`) goes to the operator log. */
const route = (d: Decl): AdminRoute => ({
  kind: "admin",
  lane: "admin",
  tag,
  ...d,
  handler: async (ctx) => {
    const r = await d.handler(ctx);
    if (r.change) auditChange(ctx.operator, d.action, r.change);
    return r;
  },
});

/**
 * Every operator route of spec 4.5 (plus the lane's own maintenance switch and job status), declared
 * once. Served by the operator listener only (api/ops-app.ts); 404 on the public host.
 */
export const ADMIN_ROUTES: AdminRoute[] = [
  route({
    operationId: "listApiKeys",
    method: "GET",
    path: "/api/api-keys",
    action: "list-api-keys",
    mutating: false,
    summary: "List API keys (masked tokens)",
    responseDescription:
      "`{ keys[], total }`; each key with `maskedToken` `bl_live_<prefix>_…`, never the secret or its hash.",
    handler: async (ctx) => {
      const keys = (await ctx.ops.keys.list()).map(listing);
      return { body: { keys, total: keys.length } };
    },
  }),
  route({
    operationId: "createApiKey",
    method: "POST",
    path: "/api/api-keys",
    action: "create-api-key",
    mutating: true,
    body: CreateKeyBody,
    successStatus: 201,
    summary: "Create an API key",
    responseDescription: "201 `{ key, token }`: the plaintext token is returned once.",
    handler: async (ctx) => {
      const b = ctx.body as z.output<typeof CreateKeyBody>;
      const { record, token } = await ctx.ops.keys.create({
        name: b.name,
        ownerEmail: b.ownerEmail ?? null,
        tier: b.tier,
        rateLimitPerMinute: b.rateLimitPerMinute,
      });
      return {
        status: 201,
        body: { key: { ...recordView(record), ownerEmail: b.ownerEmail ?? null }, token },
        change: keyChange(record.id, null, { ...record, ownerEmail: b.ownerEmail }),
      };
    },
  }),
  route({
    operationId: "updateApiKey",
    method: "POST",
    path: "/api/api-keys/:id/update",
    action: "update-api-key",
    mutating: true,
    params: keyId,
    body: UpdateKeyBody,
    summary: "Update an API key",
    responseDescription: "`{ ok: true, key }` (masked); 404 for an unknown id.",
    handler: async (ctx) => {
      const before = await ctx.ops.keys.get(ctx.params.id);
      const key = await ctx.ops.keys.update(ctx.params.id, ctx.body as z.output<typeof UpdateKeyBody>);
      if (!key || !before) throw new HttpError(404, "Unknown API key");
      return { body: { ok: true, key: listing(key) }, change: keyChange(key.id, before, key) };
    },
  }),
  route({
    operationId: "deactivateApiKey",
    method: "POST",
    path: "/api/api-keys/:id/deactivate",
    action: "deactivate-api-key",
    mutating: true,
    params: keyId,
    summary: "Deactivate an API key",
    responseDescription:
      "`{ ok: true, id, isActive: false }`; the key answers 401 from then on; 404 for an unknown id.",
    handler: async (ctx) => {
      const before = await ctx.ops.keys.get(ctx.params.id);
      if (!(await ctx.ops.keys.deactivate(ctx.params.id)) || !before) throw new HttpError(404, "Unknown API key");
      return {
        body: { ok: true, id: ctx.params.id, isActive: false },
        change: keyChange(before.id, before, { ...before, isActive: false }),
      };
    },
  }),
  route({
    operationId: "rotateApiKey",
    method: "POST",
    path: "/api/api-keys/:id/rotate",
    action: "rotate-api-key",
    mutating: true,
    params: keyId,
    summary: "Rotate an API key",
    responseDescription:
      "`{ ok: true, key, token }`: the old token stops at once, the new one is returned once; 404 for an unknown or inactive key.",
    handler: async (ctx) => {
      const before = await ctx.ops.keys.get(ctx.params.id);
      const out = await ctx.ops.keys.rotate(ctx.params.id);
      if (!out || !before) throw new HttpError(404, "Unknown or inactive API key");
      return {
        body: { ok: true, key: recordView(out.record), token: out.token },
        change: keyChange(before.id, before, { ...out.record, ownerEmail: before.ownerEmail }),
      };
    },
  }),
  route({
    operationId: "backfillDepegs",
    method: "POST",
    path: "/api/backfill-depegs",
    action: "backfill-depegs",
    mutating: true,
    idempotent: true,
    query: z.object({ stablecoin: stablecoinQ(), batch: optInt(0, 10_000, 0, "Batch of 3 coins") }),
    summary: "Backfill depeg incidents (3 coins per batch)",
    description:
      "Captures the history (CoinGecko market chart and DefiLlama supply) of the selected coins (3 per batch) through the live clients, then rebuilds the dated snapshots of the captured window as a background job (published days are skipped, never rewritten).",
    responseDescription: HISTORY_BACKFILL_RESULT,
    handler: historyBackfill("backfill-depegs", runJob),
  }),
  route({
    operationId: "backfillSupplyHistory",
    method: "POST",
    path: "/api/backfill-supply-history",
    action: "backfill-supply-history",
    mutating: true,
    idempotent: true,
    query: z.object({
      stablecoin: stablecoinQ(),
      batch: optInt(0, 10_000, 0, "Batch index"),
      batchSize: optInt(1, 100, 10, "Coins per batch"),
      "allow-constant-price-fallback": boolParam(false).describe(
        "Value supply at a constant price where no price exists (`true`)",
      ),
    }),
    summary: "Backfill supply history",
    description:
      "Captures the DefiLlama supply history of the selected coins through the live client, then rebuilds the dated snapshots of the captured window as a background job (published days are skipped, never rewritten).",
    responseDescription: HISTORY_BACKFILL_RESULT,
    handler: historyBackfill("backfill-supply-history", runJob),
  }),
  route({
    operationId: "backfillStabilityIndex",
    method: "POST",
    path: "/api/backfill-stability-index",
    action: "backfill-stability-index",
    mutating: true,
    idempotent: true,
    query: BackfillStabilityIndexQuery,
    summary: "Rebuild the stability index history (dated snapshots)",
    description:
      "The PSI of a past day is part of its immutable dated snapshot: this runs the dated-snapshot backfill (`build/cli.ts build --from --to`; published days are skipped) as a background job. Never writes the current UTC day.",
    responseDescription:
      "dry-run: `{ dryRun, startDay, endDay, endDayClamped, days, alreadyPublished, wouldBuild[] }`; else the job's result or 202 `{ ok, accepted, requestId }`",
    handler: backfillStabilityIndex,
  }),
  route({
    operationId: "backfillCgPrices",
    method: "POST",
    path: "/api/backfill-cg-prices",
    action: "backfill-cg-prices",
    mutating: true,
    idempotent: true,
    query: z.object({
      stablecoin: stablecoinQ(),
      batchSize: optInt(1, 100, 10, "Coins per batch"),
      batch: optInt(0, 10_000, 0, "Batch index"),
    }),
    summary: "Backfill CoinGecko prices",
    description:
      "Captures the CoinGecko price history (market chart) of the selected coins through the live client, then rebuilds the dated snapshots of the captured window as a background job (published days are skipped, never rewritten).",
    responseDescription: HISTORY_BACKFILL_RESULT,
    handler: historyBackfill("backfill-cg-prices", runJob),
  }),
  route({
    operationId: "backfillMintBurnPrices",
    method: "POST",
    path: "/api/backfill-mint-burn-prices",
    action: "backfill-mint-burn-prices",
    mutating: true,
    idempotent: true,
    summary: "Value unpriced mint/burn rows",
    description:
      "Finds the serving build's mint/burn rows without a USD value, captures the CoinGecko price history of their coins through the live client (stored with provenance beside the other captures), then publishes a new build as of the serving build's as-of and counts the rows it values (a background job in the build lock; published dated objects are never rewritten).",
    responseDescription: MINT_BURN_PRICES_RESULT,
    handler: backfillMintBurnPrices(runJob),
  }),
  route({
    operationId: "backfillDews",
    method: "GET",
    path: "/api/backfill-dews",
    action: "backfill-dews",
    mutating: false,
    summary: "Validate DEWS against historical depegs",
    description:
      "Runs the depeg backtest over the recorded history as of the serving build (`build/depeg-backtest-cli.ts dews-validation`, a background job) and validates DEWS against its incidents: per incident whether an alert (band ALERT or worse) was issued within 7 days before its start and how long before (a day's score counts from the end of its UTC day; the start day's own score is `at-onset`, never a lead), misses and uncovered incidents, alert episodes as true, false, in-event or open, precision and recall per coin and overall, with the methodology versions.",
    responseDescription: DEWS_VALIDATION_RESULT,
    handler: dewsValidation(runJob),
  }),
  route({
    operationId: "backfillMintBurn",
    method: "POST",
    path: "/api/backfill-mint-burn",
    action: "backfill-mint-burn",
    mutating: true,
    idempotent: true,
    query: z
      .object({
        configKey: text(200, "Supply config key (see debug-sync-state)"),
        fromBlock: intParam(0, Number.MAX_SAFE_INTEGER).describe("First block"),
        toBlock: intParam(0, Number.MAX_SAFE_INTEGER).describe("Last block (≥ fromBlock; clamped to the safe head)"),
        chunkSize: optInt(1, 50_000, 50_000, "Blocks per range"),
        maxChunks: optInt(1, 1000, 24, "Ranges per call"),
      })
      .refine((q) => q.toBlock >= q.fromBlock, { message: "must be ≥ fromBlock", path: ["toBlock"] }),
    summary: "Re-read mint/burn events of one config over a block range",
    description:
      "Runs the on-chain job `backfill-mint-burn` (each range replaces that config's rows in one transaction; never moves the sync cursor). Needs `BALLAST_RPC_<CHAIN>`.",
    responseDescription:
      "`{ configKey, fromBlock, toBlock, safeHead, chunks, rows, processedThrough, done, nextFromBlock }`, or 202 `{ ok, accepted, requestId }` while it runs",
    handler: async (ctx) => {
      await checkSupplyConfigKey(ctx, (ctx.query as { configKey: string }).configKey);
      return onchainJob(ctx, "backfill-mint-burn", ctx.query);
    },
  }),
  route({
    operationId: "reclassifyAtomicRoundtrips",
    method: "POST",
    path: "/api/reclassify-atomic-roundtrips",
    action: "reclassify-atomic-roundtrips",
    mutating: true,
    idempotent: true,
    summary: "Reclassify atomic mint/burn round trips (1000 groups per call)",
    description:
      "Runs the build's atomic round-trip rule (a mint and a burn of the same coin in one transaction within 0.5%) over the next 1000 same-transaction groups of the ledger and reports every row whose classification differs from the serving build's (the next build publishes it); the cursor is kept in the data dir, repeat until `done`.",
    responseDescription: RECLASSIFY_RESULT,
    handler: reclassifyAtomicRoundtrips(runJob),
  }),
  route({
    operationId: "previewDepegHistoryAudit",
    method: "GET",
    path: "/api/audit-depeg-history",
    action: "audit-depeg-history",
    mutating: false,
    idempotent: true,
    getAllowed: (q) => q["dry-run"] === "true",
    query: z.object({ "dry-run": trueOnly("Must be `true` on GET (a repair is POST-only)"), ...AuditQuery }),
    summary: "Preview a depeg history audit",
    description:
      "GET only with `dry-run=true` (else 405 `Allow: POST`). Runs the depeg backtest over the recorded history as of the serving build (`build/depeg-backtest-cli.ts audit`, a background job) and lists its findings: peaks on a lone print, events below the supply threshold, synthetic splits of one episode, published events the current rules do not produce. Records nothing.",
    responseDescription: DEPEG_AUDIT_RESULT,
    handler: depegAudit(runJob),
  }),
  route({
    operationId: "auditDepegHistory",
    method: "POST",
    path: "/api/audit-depeg-history",
    action: "audit-depeg-history",
    mutating: true,
    idempotent: true,
    query: z.object({
      "dry-run": boolParam(true).describe("Only report (default true)"),
      ...AuditQuery,
      delete: z
        .string()
        .regex(/^[A-Za-z0-9_:.-]{1,100}(,[A-Za-z0-9_:.-]{1,100}){0,999}$/, "must be comma-separated event ids")
        .optional()
        .describe("Comma-separated event ids to delete"),
    }),
    summary: "Audit or repair the depeg history",
    description:
      "The audit of the GET preview; with `dry-run=false` it records the reviewed verdicts (`delete` event ids; with `repair=synthetic-splits` the merge of every split chain found) as the next write-once version of `verdicts/depeg-history/` with who, when and why. The next build applies them (dated snapshots are never rewritten) and lists them in its manifest (`depegVerdicts`).",
    responseDescription: DEPEG_AUDIT_RESULT,
    handler: depegAudit(runJob),
  }),
  route({
    operationId: "triggerDigest",
    method: "POST",
    path: "/api/trigger-digest",
    action: "trigger-digest",
    mutating: true,
    idempotent: true,
    successStatus: 202,
    summary: "Run a build that publishes the daily digest",
    description:
      "Starts `build/cli.ts build --as-of <service now>` in the background (the build publishes the digest of the last closed UTC day) and answers at once.",
    responseDescription: "202 `{ ok, accepted, requestId }`",
    handler: async (ctx) => {
      const { now } = serviceNow(await ctx.ops.store.build(), ctx.ops.clockMode, ctx.ops.nowMs());
      const asOf = new Date(now * 1000).toISOString();
      const { record } = ctx.ops.jobs.start(
        "trigger-digest",
        { script: "build/cli.ts", args: ["build", "--as-of", asOf] },
        { asOf },
        "build",
      );
      return { status: 202, body: { ok: true, accepted: true, requestId: record.requestId } };
    },
  }),
  route({
    operationId: "resetBlacklistSync",
    method: "POST",
    path: "/api/reset-blacklist-sync",
    action: "reset-blacklist-sync",
    mutating: true,
    idempotent: true,
    summary: "Roll the freeze sync cursors back",
    description:
      "Runs the on-chain job `reset-blacklist-sync`: EVM cursors back 50000 blocks, Tron back 7 days; no rows deleted.",
    responseDescription: "`{ ok, evmReset, tronReset }` (cursors changed)",
    handler: (ctx) => onchainJob(ctx, "reset-blacklist-sync", {}),
  }),
  route({
    operationId: "debugSyncState",
    method: "GET",
    path: "/api/debug-sync-state",
    action: "debug-sync-state",
    mutating: false,
    summary: "Blacklist sync cursors",
    description: "Runs the on-chain job `debug-sync-state` over the ledger.",
    responseDescription: "array of `{ config_key, last_block }`",
    handler: (ctx) => onchainJob(ctx, "debug-sync-state", {}),
  }),
  route({
    operationId: "remediateBlacklistAmountGaps",
    method: "POST",
    path: "/api/remediate-blacklist-amount-gaps",
    action: "remediate-blacklist-amount-gaps",
    mutating: true,
    idempotent: true,
    query: z.object({
      chainId: text(64, "Chain id").optional(),
      stablecoin: stablecoinQ(),
      limit: optInt(1, 200, 25, "Rows per call"),
      dryRun: boolParam(true).describe("Only list (default true)"),
      onlyMissingProvenance: boolParam(true).describe("Only rows whose amount source is unavailable (default true)"),
      maxAttempts: optInt(0, 10_000, 25, "Skip rows with this many failed reads"),
    }),
    summary: "Re-read missing freeze amounts",
    description: "Runs the on-chain job `remediate-blacklist-amount-gaps` (time budget 900 s).",
    responseDescription:
      "`{ dryRun, gapRows, exhausted, candidates[], attempted, resolved, failed, skipped, budgetExhausted }`, or 202 while it runs",
    handler: async (ctx) => {
      await checkFreezeFilter(ctx, ctx.query as { stablecoin?: string; chainId?: string }, true);
      return onchainJob(ctx, "remediate-blacklist-amount-gaps", ctx.query);
    },
  }),
  route({
    operationId: "backfillBlacklistCurrentBalances",
    method: "POST",
    path: "/api/backfill-blacklist-current-balances",
    action: "backfill-blacklist-current-balances",
    mutating: true,
    idempotent: true,
    query: z.object({
      stablecoin: stablecoinQ(),
      chainId: text(64, "Chain id").optional(),
      limit: optInt(1, 2000, 500, "Addresses per call"),
      dryRun: boolParam(true).describe("Only count (default true)"),
    }),
    summary: "Snapshot current balances of blacklisted addresses",
    description: "Runs the on-chain job `backfill-blacklist-current-balances`; 400 when the filters match no config.",
    responseDescription: "`{ dryRun, configs[], totals }` (per-config counts), or 202 while it runs",
    handler: async (ctx) => {
      await checkFreezeFilter(ctx, ctx.query as { stablecoin?: string; chainId?: string }, false);
      return onchainJob(ctx, "backfill-blacklist-current-balances", ctx.query);
    },
  }),
  route({
    operationId: "listDiscoveryCandidates",
    method: "GET",
    path: "/api/discovery-candidates",
    action: "list-discovery-candidates",
    mutating: false,
    query: DiscoveryCandidatesQuery,
    summary: "Coins the upstream list carries that the registry does not",
    description:
      "The serving build's unreviewed coins with operator decisions. A dismissed candidate resurfaces once its market cap reaches 10× the value at dismissal.",
    responseDescription: "`{ candidates[], total }`",
    handler: async (ctx) => {
      const q = ctx.query as z.output<typeof DiscoveryCandidatesQuery>;
      const all = await ctx.ops.discovery.candidates(await unreviewedCoins(ctx));
      const chosen = q.status === "all" ? all : all.filter((c) => c.status === q.status);
      return {
        body: { candidates: chosen.slice(q.offset, q.offset + q.limit), total: chosen.length },
      };
    },
  }),
  route({
    operationId: "dismissDiscoveryCandidate",
    method: "POST",
    path: "/api/discovery-candidates/:id/dismiss",
    action: "dismiss-discovery-candidate",
    mutating: true,
    params: z.object({ id: z.string().min(1).max(200).describe("Candidate (provisional stablecoin) id") }),
    summary: "Dismiss a discovery candidate",
    responseDescription: "`{ ok: true }`; 404 when missing or already dismissed",
    handler: async (ctx) => {
      const coin = (await unreviewedCoins(ctx)).find((c) => c.id === ctx.params.id);
      if (!coin) throw new HttpError(404, "Unknown discovery candidate");
      const [state] = await ctx.ops.discovery.candidates([coin]);
      if (state.status === "dismissed" || !(await ctx.ops.discovery.dismiss(coin)))
        throw new HttpError(404, "Discovery candidate already dismissed");
      return { body: { ok: true }, change: changeOf(coin.id, { status: state.status }, { status: "dismissed" }) };
    },
  }),
  route({
    operationId: "getMaintenance",
    method: "GET",
    path: "/api/admin/maintenance",
    action: "get-maintenance",
    mutating: false,
    summary: "Maintenance switch state",
    responseDescription: "`{ enabled, message, updatedAt, updatedBy, forcedByEnv }`",
    handler: async (ctx) => ({ body: await ctx.ops.maintenance.current() }),
  }),
  route({
    operationId: "setMaintenance",
    method: "POST",
    path: "/api/admin/maintenance",
    action: "set-maintenance",
    mutating: true,
    body: MaintenanceBody,
    summary: "Switch maintenance mode",
    description:
      'While on, the public listener answers 503 `{ error: "maintenance", message }` with `Retry-After: 300` on every `/api/*` request (preflights excepted); every instance sharing the state store follows within about a second.',
    responseDescription: "the new state",
    handler: async (ctx) => {
      const b = ctx.body as z.output<typeof MaintenanceBody>;
      const { enabled, message } = await ctx.ops.maintenance.current();
      const after = await ctx.ops.maintenance.set(b.enabled, b.message, ctx.operator.subject);
      return {
        body: after,
        change: changeOf("maintenance", { enabled, message }, { enabled: after.enabled, message: after.message }),
      };
    },
  }),
  route({
    operationId: "getAdminJob",
    method: "GET",
    path: "/api/admin/jobs/:requestId",
    action: "get-admin-job",
    mutating: false,
    params: z.object({
      requestId: z
        .string()
        .regex(/^[0-9a-f-]{36}$/, "must be a request id")
        .describe("requestId of a 202 answer"),
    }),
    summary: "State of a background job",
    description:
      "`status`: `queued`, `running`, `succeeded`, `rejected`, `failed`, or `interrupted` (the server running it stopped or was killed before it finished; its child process was stopped with it, and the next server start marks it so). An `Idempotency-Key` replay of a 202 answer carries the job's current `status`.",
    responseDescription:
      "`{ requestId, action, status, params, result, error, exitCode, createdAt, startedAt, finishedAt }`",
    handler: async (ctx) => {
      const job = await ctx.ops.jobs.get(ctx.params.requestId);
      if (!job) throw new HttpError(404, "Unknown job");
      return { body: job };
    },
  }),
];
