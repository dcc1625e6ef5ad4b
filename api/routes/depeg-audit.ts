import { DepegLedgerSchema, depegLedgerArtifact } from "../../site-data/depeg-events.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { JobCommand } from "../lib/jobs.ts";
import type { AdminContext, AdminResult } from "../lib/ops-services.ts";
import { servingStablecoinList } from "./history-backfills.ts";

/**
 * The depeg backtest jobs of spec 4.5: `GET /api/backfill-dews` (DEWS validated against the depeg
 * history) and `GET|POST /api/audit-depeg-history` (audit, and recording of reviewed verdicts). The
 * route checks its filters against the serving build (synchronously, so a bad filter is a 400 before
 * any job starts), then starts `build/depeg-backtest-cli.ts <job> --as-of <serving build as-of> …`
 * in the `build` lock group (build/depeg-backtest.ts: the backtest over the recorded history as of
 * the serving build, then the validation or the audit).
 */

/** The runner of admin.ts (`runJob`): the job's result when it ends within the wait, else 202. */
type Run = (
  ctx: AdminContext,
  action: string,
  cmd: JobCommand,
  params: unknown,
  group: "build",
) => Promise<AdminResult>;

const SCRIPT = "build/depeg-backtest-cli.ts";

/** Result shape of backfill-dews, for its `responseDescription`. */
export const DEWS_VALIDATION_RESULT =
  "`{ methodology { version, dewsVersion, depegVersion, horizonHours, alertScore, scoreIssuedAt }, asOf, dewsDays { first, last }, overall, coins[], events[{ id, stablecoinId, symbol, startedAt, peakDeviationBps, outcome: warned|at-onset|missed|not-covered, followUp, leadHours, alertIssuedAt, maxScoreBefore }], alertEpisodes[{ stablecoinId, firstDay, lastDay, issuedAt, peakScore, outcome: true|in-event|open|false, eventId }] }` (counts: events, covered, warned, atOnset, missed, notCovered, freshCovered, freshWarned, alertEpisodes, trueAlerts, falseAlarms, inEventAlerts, openAlerts, recall, recallFresh, precision, medianLeadHours, meanLeadHours), or 202 `{ ok, accepted, requestId, statusPath }` while it runs";

/** Result shape of audit-depeg-history, for its `responseDescription`. */
export const DEPEG_AUDIT_RESULT =
  "`{ dryRun, asOf, buildId, methodology, filters, eventsAudited, publishedEvents, findingsTotal, counts{kind: n}, findings[{ kind: lone-print-peak|small-supply|unknown-supply|synthetic-split|not-reproduced, eventId, stablecoinId, symbol, startedAt, detail }] (page: offset, limit), deletes[], repairs[{ into, eventIds }], recorded: { key, version, sha256, appliesAt } | null }`, or 202 `{ ok, accepted, requestId, statusPath }` while it runs; 400 naming `symbol` or `delete` for a filter no coin or event matches";

/** The serving build's as-of (Unix s). @throws 503 without a published build. */
async function servingAsOf(ctx: AdminContext): Promise<number> {
  const build = await ctx.ops.store.build();
  if (!build) throw notYetAvailable("no published build (the backtest runs as of the serving build)");
  return build.manifest.asOf;
}

/** Handler of `GET /api/backfill-dews`: the DEWS validation job as of the serving build. */
export function dewsValidation(run: Run) {
  return async (ctx: AdminContext): Promise<AdminResult> => {
    const asOf = await servingAsOf(ctx);
    return run(
      ctx,
      "backfill-dews",
      { script: SCRIPT, args: ["dews-validation", "--as-of", String(asOf)] },
      { asOf },
      "build",
    );
  };
}

/** Query of audit-depeg-history as the route's schema outputs it (admin.ts `AuditQuery`, plus `delete` on POST). */
interface AuditParams {
  "dry-run": boolean | "true";
  limit: number;
  offset: number;
  "min-supply": number;
  symbol?: string;
  repair?: "synthetic-splits";
  delete?: string;
}

/**
 * Handler of `GET|POST /api/audit-depeg-history`. Checks `symbol` (a symbol of a coin the serving
 * build lists, case-insensitive) and `delete` (ids of events the serving build published), then runs
 * the audit job; `dry-run=false` (POST only) records the verdicts (`--record --operator <subject>`)
 * and logs the recording in the operator log.
 * @throws HttpError 400 naming `symbol` or `delete`; 503 without a serving build or its artifacts.
 */
export function depegAudit(run: Run) {
  return async (ctx: AdminContext): Promise<AdminResult> => {
    const q = ctx.query as unknown as AuditParams;
    const asOf = await servingAsOf(ctx);
    const { build, list } = await servingStablecoinList(ctx);
    if (q.symbol !== undefined) {
      const s = q.symbol.toLowerCase();
      if (!list.peggedAssets.some((a) => a.symbol.toLowerCase() === s))
        throw new HttpError(
          400,
          `Invalid parameter symbol: no listed stablecoin has symbol ${JSON.stringify(q.symbol)}`,
        );
    }
    const ids = [...new Set((q.delete ?? "").split(",").filter(Boolean))];
    if (ids.length) {
      const ledger = await build
        .payload(depegLedgerArtifact.outputs.main.path, (x) => DepegLedgerSchema.parse(x))
        .catch(() => undefined);
      if (!ledger) throw notYetAvailable(depegLedgerArtifact.key);
      const known = new Set(ledger.events.map((e) => String(e.id)));
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length)
        throw new HttpError(
          400,
          `Invalid parameter delete: unknown event id${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")} (not in the serving build's depeg history)`,
        );
    }
    const record = q["dry-run"] === false;
    const args = ["audit", "--as-of", String(asOf), "--limit", String(q.limit), "--offset", String(q.offset)];
    args.push("--min-supply", String(q["min-supply"]));
    if (q.symbol !== undefined) args.push("--symbol", q.symbol);
    if (q.repair !== undefined) args.push("--repair", q.repair);
    if (ids.length) args.push("--delete", ids.join(","));
    if (record) args.push("--record", "--operator", ctx.operator.subject);
    const params = { asOf, dryRun: !record, ...q, ...(ids.length ? { delete: ids } : {}) };
    const answer = await run(ctx, "audit-depeg-history", { script: SCRIPT, args }, params, "build");
    if (!record || !(ids.length || q.repair)) return answer;
    return {
      ...answer,
      change: {
        target: "depeg-history-verdicts",
        before: null,
        after: { delete: ids, repair: q.repair ?? null, basisAsOf: asOf },
      },
    };
  };
}
