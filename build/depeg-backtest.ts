import { join } from "node:path";
import {
  type AuditEvent,
  auditDepegHistory,
  auditMethodology,
  type PublishedEvent,
} from "../pipelines/analytics/depeg-audit.ts";
import type { DewsBand } from "../pipelines/analytics/stress-signals.version.ts";
import { type DewsDay, validateDews, type ValidationEvent } from "../pipelines/analytics/dews-validation.ts";
import { DepegLedgerSchema } from "../site-data/depeg-events.ts";
import { LatestPointerSchema } from "../site-data/manifest.ts";
import { loadBuildConfig } from "./config.ts";
import { recordDepegVerdicts } from "./depeg-verdicts.ts";
import type { Db } from "./duckdb.ts";
import { defaultBuildEffects } from "./effects.ts";
import { createSink } from "./sinks/create-sink.ts";
import type { Sink } from "./sinks/sink.ts";
import { buildPrefix } from "./stages/publish.ts";
import { loadAndModel } from "./stages/model.ts";

/**
 * Depeg backtest jobs of the operator lane (spec 4.5), run as a child process by api/routes/depeg-audit.ts:
 *
 *   tsx build/depeg-backtest-cli.ts dews-validation --as-of <Unix s>
 *   tsx build/depeg-backtest-cli.ts audit --as-of <Unix s> [--limit n] [--offset n] [--min-supply usd]
 *       [--symbol s] [--delete id,…] [--repair synthetic-splits] [--record --operator <subject>]
 *
 * Both run the backtest of `make backtest` (scripts/backtest.ts): load + model over every recorded
 * price archive with the build's own inputs (captures ≤ as-of, warehouse, ledger and the recorded
 * depeg verdicts: defaultBuildEffects), as of the serving build's as-of, then:
 * - `dews-validation`: validates `dews_daily` against `depeg_incidents` (pipelines/analytics/dews-validation.ts);
 * - `audit`: audits `depeg_incidents` against the serving build's published events
 *   (pipelines/analytics/depeg-audit.ts). With `--record` (the route's `dry-run=false`) it records the
 *   reviewed verdicts (`--delete` ids, and the merge of every synthetic-split chain with
 *   `--repair synthetic-splits`) as the next version of `verdicts/depeg-history/` (build/depeg-verdicts.ts),
 *   which the next build applies; nothing published is rewritten.
 * Exit codes follow the job runner: 0 with the JSON result; 2 with `{ error }` for bad input (unknown
 * job, missing flag, an id in `--delete` the backtest does not produce); 1 on failure.
 */

/** Bad input: the CLI exits 2 with `{ error }` (the route answers 400). */
export class BadInput extends Error {}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}
function intFlag(args: string[], name: string, def: number): number {
  const v = flag(args, name);
  if (v === undefined) return def;
  if (!/^\d+(\.\d+)?$/.test(v)) throw new BadInput(`Invalid parameter ${name.slice(2)}: must be a non-negative number`);
  return Number(v);
}

/** The serving build (latest.json) of `sink`: id, as-of and its published depeg events; null without one. */
async function servingEvents(sink: Sink): Promise<{ buildId: string; asOf: number; events: PublishedEvent[] } | null> {
  const pointer = await sink.get("latest.json");
  if (!pointer) return null;
  const latest = LatestPointerSchema.parse(JSON.parse(Buffer.from(pointer).toString("utf8")));
  const bytes = await sink.get(`${buildPrefix(latest.buildId)}site-data/depeg-events.json`);
  const ledger = bytes ? DepegLedgerSchema.parse(JSON.parse(Buffer.from(bytes).toString("utf8"))) : { events: [] };
  return {
    buildId: latest.buildId,
    asOf: latest.asOf,
    events: ledger.events.map((e) => ({
      id: Number(e.id),
      stablecoinId: e.stablecoinId,
      symbol: e.symbol,
      startedAt: e.startedAt,
    })),
  };
}

/** Every incident of the backtest database with the facts the audit judges. */
async function auditEvents(db: Db, asOf: number): Promise<AuditEvent[]> {
  const rows = await db.all<{
    id: string;
    stablecoin_id: string;
    symbol: string;
    direction: string;
    peak_deviation_bps: string;
    started_at: string;
    ended_at: string | null;
    trace_json: string;
    other_max: string | null;
    supply_usd: number | null;
  }>(
    `with incidents as (select * from depeg_incidents),
     peaks as (
       select id, (trace_json::json->'peak'->>'ts')::bigint as peak_ts from incidents
     ),
     others as (
       select i.id, max(abs(s.deviation_bps)) as other_max
       from incidents i join peaks p on p.id = i.id
       join price_consensus_slots s on s.stablecoin_id = i.stablecoin_id
         and s.slot_ts between i.started_at and coalesce(i.ended_at, $as_of)
         and s.slot_ts <> p.peak_ts and s.deviation_bps is not null
       group by i.id
     ),
     supply as (
       select i.id, (
         select h.usd from int_supply_history_points h
         where h.stablecoin_id = i.stablecoin_id and h.usd is not null and epoch(h.date) <= i.started_at
         order by h.date desc, h.priority, h.source limit 1
       ) as supply_usd
       from incidents i
     ),
     final as (
       select i.id::varchar as id, i.stablecoin_id, i.symbol, i.direction, i.peak_deviation_bps::varchar as peak_deviation_bps,
         i.started_at::varchar as started_at, i.ended_at::varchar as ended_at, i.trace_json,
         o.other_max::varchar as other_max, s.supply_usd
       from incidents i left join others o on o.id = i.id left join supply s on s.id = i.id
     )
     select * from final order by stablecoin_id, started_at, id`,
    { as_of: asOf },
  );
  return rows.map((r) => {
    const quotes = (JSON.parse(r.trace_json).peak?.quotes ?? []) as { source: string; family?: string | null }[];
    return {
      id: Number(r.id),
      stablecoinId: r.stablecoin_id,
      symbol: r.symbol,
      direction: r.direction,
      peakDeviationBps: Number(r.peak_deviation_bps),
      startedAt: Number(r.started_at),
      endedAt: r.ended_at === null ? null : Number(r.ended_at),
      peakFamilies: new Set(quotes.map((q) => q.family ?? q.source)).size,
      otherSlotsMaxBps: r.other_max === null ? null : Number(r.other_max),
      supplyUsdAtStart: r.supply_usd === null ? null : Number(r.supply_usd),
    };
  });
}

/** Runs one job (see the module comment) and returns its JSON result. @throws BadInput on bad input. */
export async function runDepegBacktest(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<unknown> {
  const [job, ...rest] = args;
  if (job !== "audit" && job !== "dews-validation") throw new BadInput(`unknown job ${job}: audit or dews-validation`);
  const asOfText = flag(rest, "--as-of");
  if (!asOfText || !/^\d+$/.test(asOfText)) throw new BadInput("--as-of: required (Unix s)");
  const asOf = Number(asOfText);
  const config = loadBuildConfig(env);
  const sink = createSink(config);
  const fx = defaultBuildEffects({
    captureDir: config.BALLAST_CAPTURE_DIR,
    sink,
    warehousePath: config.BALLAST_WAREHOUSE ?? join(config.BALLAST_DATA_DIR, "warehouse.duckdb"),
    onchainLedgerPath: config.BALLAST_ONCHAIN_LEDGER ?? join(config.BALLAST_DATA_DIR, "onchain.duckdb"),
    scratchDir: config.BALLAST_SCRATCH_DIR,
  });
  const { db } = await loadAndModel({
    asOf,
    effects: fx,
    spillDir: join(fx.scratchDir, `ballast-backtest-${process.pid}`),
  });
  try {
    if (job === "dews-validation") {
      const dews = await db.all<{ stablecoin_id: string; day: number; score: number; band: DewsBand }>(
        "select stablecoin_id, epoch(date)::integer as day, score::integer as score, band from dews_daily order by stablecoin_id, date",
      );
      const events = await db.all<{
        id: string;
        stablecoin_id: string;
        symbol: string;
        direction: string;
        peak: number;
        started_at: number;
        ended_at: number | null;
      }>(
        "select id::varchar as id, stablecoin_id, symbol, direction, peak_deviation_bps::integer as peak, started_at::integer as started_at, ended_at::integer as ended_at from depeg_incidents order by started_at, id",
      );
      return validateDews(
        dews.map((d): DewsDay => ({ stablecoinId: d.stablecoin_id, day: d.day, score: d.score, band: d.band })),
        events.map(
          (e): ValidationEvent => ({
            id: Number(e.id),
            stablecoinId: e.stablecoin_id,
            symbol: e.symbol,
            direction: e.direction,
            peakDeviationBps: e.peak,
            startedAt: e.started_at,
            endedAt: e.ended_at,
          }),
        ),
        asOf,
      );
    }
    return await audit(db, sink, asOf, rest);
  } finally {
    db.close();
  }
}

async function audit(db: Db, sink: Sink, asOf: number, rest: string[]) {
  const limit = intFlag(rest, "--limit", 200);
  const offset = intFlag(rest, "--offset", 0);
  const minSupply = intFlag(rest, "--min-supply", 0);
  const symbol = flag(rest, "--symbol") ?? null;
  const repair = flag(rest, "--repair") ?? null;
  if (repair !== null && repair !== "synthetic-splits")
    throw new BadInput("Invalid parameter repair: must be synthetic-splits");
  const record = rest.includes("--record");
  const deleteIds = (flag(rest, "--delete") ?? "").split(",").filter(Boolean);
  const serving = await servingEvents(sink);
  const events = await auditEvents(db, asOf);
  const byId = new Map(events.map((e) => [String(e.id), e]));
  const unknown = deleteIds.filter((id) => !byId.has(id));
  if (unknown.length)
    throw new BadInput(
      `Invalid parameter delete: ${unknown.join(", ")} ${unknown.length === 1 ? "is not an event" : "are not events"} of the depeg history`,
    );
  const { eventsAudited, findings, splitChains } = auditDepegHistory(events, serving?.events ?? [], {
    symbol,
    minSupply,
  });
  const whyOf = (id: number) => findings.filter((f) => f.eventId === id).map((f) => f.kind);
  const deletes = deleteIds.map((id) => {
    const e = byId.get(id) as AuditEvent;
    return {
      eventId: e.id,
      stablecoinId: e.stablecoinId,
      startedAt: e.startedAt,
      why: ["operator-delete", ...whyOf(e.id)],
    };
  });
  const merges =
    repair === "synthetic-splits"
      ? splitChains.map((ids) => {
          const first = byId.get(String(ids[0])) as AuditEvent;
          return { into: ids[0], eventIds: ids, stablecoinId: first.stablecoinId, why: ["synthetic-split"] };
        })
      : [];
  const counts: Record<string, number> = {};
  for (const f of findings) counts[f.kind] = (counts[f.kind] ?? 0) + 1;
  let recorded = null;
  if (record && (deletes.length || merges.length)) {
    const operator = flag(rest, "--operator");
    if (!operator) throw new BadInput("--operator: required with --record");
    const stored = await recordDepegVerdicts(sink, {
      recordedAt: Math.floor(Date.now() / 1000),
      recordedBy: operator,
      requestId: flag(rest, "--request-id") ?? null,
      basis: { buildId: serving?.buildId ?? null, asOf },
      deletes,
      merges,
    });
    recorded = { key: stored.key, version: stored.file.version, sha256: stored.sha256, appliesAt: "next build" };
  }
  return {
    dryRun: !record,
    asOf,
    buildId: serving?.buildId ?? null,
    methodology: auditMethodology(minSupply),
    filters: { symbol, minSupply, limit, offset, repair },
    eventsAudited,
    publishedEvents: serving?.events.length ?? 0,
    findingsTotal: findings.length,
    counts,
    findings: findings.slice(offset, offset + limit),
    deletes,
    repairs: merges,
    recorded,
  };
}
