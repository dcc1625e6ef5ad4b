import { randomUUID } from "node:crypto";
import { type Api, GrammyError } from "grammy";
import type { z } from "zod";
import { type BlacklistEvent, BlacklistLedgerSchema } from "../../../site-data/blacklist.ts";
import { type DepegEvent, DepegLedgerSchema } from "../../../site-data/depeg-events.ts";
import { BuildManifestSchema } from "../../../site-data/manifest.ts";
import { SafetyGradesPayloadSchema } from "../../../site-data/report-cards.ts";
import { type ClockMode, serviceNow } from "../clock.ts";
import type { SqlClient } from "../key-store.ts";
import { apiLog, errorMessage } from "../log.ts";
import { type ObjectReader, ServingBuild } from "../published.ts";
import { schemaOnce } from "../sql-schema.ts";
import {
  type Alert,
  type AlertDiff,
  type AlertOptions,
  type AlertSnapshot,
  diffAlerts,
  SAFETY_SOURCE_MAX_AGE_SEC,
  type SafetySourceState,
} from "./alerts.ts";
import { type DispatchStatus, type FollowerLookup, UNKNOWN_DISPATCH_STATUS } from "./service.ts";

/**
 * Alert dispatch (spec 6; health spec 2.8): turns each newly served build into chat alerts
 * (alerts.ts) and delivers them with the Bot API (grammy `Api.sendMessage`).
 *
 * State store tables (PGlite or Postgres; created on first use):
 * - `alert_dispatch_state` (one row, scope `telegram`): the last dispatched build (id, as-of), when
 *   it was enqueued, the safety-grade source judgement of that build, the last run's time and status.
 * - `alert_deliveries`: one row per (alert id, chat id), primary key on the pair, so a re-run or a
 *   second instance never enqueues a message twice. `status` pending → sent | failed, `attempts`,
 *   `next_attempt_at` (Unix s), `last_error`, the Telegram `message_id` once sent; `seq` keeps the
 *   build's alert order (a chat gets a build's messages in kind order).
 *
 * Enqueueing is one statement: the state row moves from the previous build to the new one
 * (compare-and-set on the previous build id) and the deliveries are inserted only if that move
 * happened; two instances handling the same build enqueue once. Delivery claims due rows with
 * `update … where … in (select … for update skip locked) returning …` (a claim token and a lease of
 * `leaseSec`), so two instances never send the same row; a crash mid-send releases the row when the
 * lease expires (at-least-once in that case only).
 *
 * Retries: a 429 waits its `retry_after`; a network error or a 5xx waits
 * `backoffBaseSec × 2^(attempts−1)` capped at `backoffMaxSec` (defaults 60 s, 120 s, 240 s, 480 s,
 * 960 s); after `maxAttempts` tries (default 6) the delivery is `failed`. Any other 4xx (403 the bot
 * was blocked or kicked, 400 chat not found) is permanent: `failed` at once, never retried.
 *
 * All times here are wall-clock Unix seconds except the safety-grade age, which is judged on the
 * build's data clock (the API service clock: replay for recorded builds).
 */

/** Defaults of {@link AlertDispatcherOptions}. */
export const DISPATCH_DEFAULTS = {
  maxAttempts: 6,
  backoffBaseSec: 60,
  backoffMaxSec: 3600,
  batchSize: 100,
  leaseSec: 120,
  backlogGraceSec: 300,
  retentionSec: 30 * 86_400,
} as const;

/** Run status values of `lastDispatchStatus`. */
export type RunStatus =
  /** The run finished; every due delivery was sent or failed permanently (or nothing was due). */
  | "ok"
  /** First build ever: recorded as the baseline, nothing sent. */
  | "baseline"
  /** The previous build could not be read (pruned, unreadable): the new build is the new baseline, nothing sent. */
  | "rebaseline"
  /** Some deliveries hit a retryable error (429, 5xx, network) and wait for their next attempt. */
  | "retrying"
  /** The run itself failed (state store, build unreadable); see logs. */
  | "error";

/** Options of {@link AlertDispatcher}. Durations in seconds. */
export interface AlertDispatcherOptions {
  /** The state store (see api/lib/key-store.ts `openSqlClient`). */
  sql: SqlClient;
  /** Published storage, to read the previously dispatched build (`builds/<id>/manifest.json` and files). */
  read: ObjectReader;
  /** grammy Bot API client (e.g. `bot.api`, or `new Api(token, { apiRoot, timeoutSeconds: 30 })`). */
  api: Api;
  /** Who follows which coins. */
  followers: FollowerLookup;
  /** Alert thresholds and windows (alerts.ts). */
  alerts?: AlertOptions;
  /** Clock of the build's data (`CLOCK`), for the safety-grade age; default `auto`. */
  clockMode?: ClockMode;
  /** Wall clock, Unix ms; default Date.now. */
  nowMs?: () => number;
  /** Tries before a delivery is failed; default 6. */
  maxAttempts?: number;
  /** First retry delay (s), doubled per attempt; default 60. */
  backoffBaseSec?: number;
  /** Cap of the retry delay (s); default 3600. */
  backoffMaxSec?: number;
  /** Deliveries claimed per `deliver` call; default 100. */
  batchSize?: number;
  /** A claimed delivery is released for another instance after this long (s); default 120. */
  leaseSec?: number;
  /** A pending delivery due longer than this (s) counts in `pendingDeliveryBacklog`; default 300. */
  backlogGraceSec?: number;
  /** Sent and failed rows older than this (s) are deleted by `runOnce`; default 30 days. */
  retentionSec?: number;
  /** Called when a chat refused a message for good (403 blocked/kicked, 400 chat not found), so the bot store can deactivate it. Errors are logged. */
  onChatGone?: (chatId: string, description: string) => Promise<void> | void;
}

/** What `enqueue` did with a build. */
export interface EnqueueResult {
  /**
   * `baseline` / `rebaseline`: recorded, nothing enqueued; `enqueued`: alerts computed and stored;
   * `unchanged`: the build was already dispatched; `older`: the build is older than the dispatched one
   * (a rollback), left alone; `raced`: another instance moved the state first, nothing stored.
   */
  action: "baseline" | "rebaseline" | "enqueued" | "unchanged" | "older" | "raced";
  buildId: string;
  previousBuildId: string | null;
  /** Alerts of the build (before follower expansion). */
  alerts: Alert[];
  /** Delivery rows inserted (alerts × following chats, minus rows that already existed). */
  deliveries: number;
  diff: AlertDiff | null;
}

/** What `deliver` did. */
export interface DeliverResult {
  sent: number;
  /** Rescheduled after a retryable error. */
  retried: number;
  /** Failed for good (permanent error or attempts exhausted). */
  failed: number;
  /** Claimed but not tried (a 429 paused the batch): released with the 429's delay. */
  released: number;
}

/** What `runOnce` did: the run status recorded in the state store, and the parts. */
export interface RunResult {
  status: RunStatus;
  enqueue: EnqueueResult | null;
  deliver: DeliverResult | null;
  error: string | null;
}

const SCOPE = "telegram";
const DDL = [
  `create table if not exists alert_dispatch_state (
    scope text primary key,
    last_build_id text,
    last_build_as_of bigint,
    last_enqueued_at bigint,
    last_alert_count integer not null default 0,
    safety_state text,
    safety_age_sec bigint,
    safety_generation text,
    last_run_at bigint,
    last_run_status text,
    last_error text
  )`,
  `create table if not exists alert_deliveries (
    alert_id text not null,
    chat_id text not null,
    kind text not null,
    coin_id text not null,
    build_id text not null,
    seq integer not null,
    text text not null,
    status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
    attempts integer not null default 0,
    next_attempt_at bigint not null,
    claimed_by text,
    last_error text,
    message_id bigint,
    created_at bigint not null,
    updated_at bigint not null,
    sent_at bigint,
    primary key (alert_id, chat_id)
  )`,
  "create index if not exists alert_deliveries_due on alert_deliveries (next_attempt_at) where status = 'pending'",
];

type StateRow = {
  last_build_id: string | null;
  last_build_as_of: string | number | null;
  last_enqueued_at: string | number | null;
  safety_state: string | null;
  safety_age_sec: string | number | null;
  safety_generation: string | null;
  last_run_at: string | number | null;
  last_run_status: string | null;
};
const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));

/** Parsed JSON of a build file checked against `schema`: null when absent, `"corrupt"` when unparseable. */
async function readPayload<T>(build: ServingBuild, path: string, schema: z.ZodType<T>): Promise<T | null | "corrupt"> {
  const bytes = await build.file(path);
  if (!bytes) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(bytes).toString("utf8")));
    return parsed.success ? parsed.data : "corrupt";
  } catch {
    return "corrupt";
  }
}

/**
 * The alert inputs of a published build: depeg incidents (site-data/depeg-events.json), freeze
 * events (site-data/blacklist-events.json) and safety grades (site-data/safety-grades.json). Reads the
 * bytes and parses them here (not through `ServingBuild.payload`, whose cache is shared with routes).
 * A corrupt depeg or freeze file counts as absent (logged); a corrupt grades file is `"corrupt"`.
 * @throws when storage cannot be read.
 */
export async function alertSnapshot(build: ServingBuild): Promise<AlertSnapshot> {
  const [depeg, freezes, grades] = await Promise.all([
    readPayload(build, "site-data/depeg-events.json", DepegLedgerSchema),
    readPayload(build, "site-data/blacklist-events.json", BlacklistLedgerSchema),
    readPayload(build, "site-data/safety-grades.json", SafetyGradesPayloadSchema),
  ]);
  const list = <T>(v: { events: T[] } | null | "corrupt", path: string): T[] | null => {
    if (v === "corrupt") {
      apiLog("warn", "alerts", "published file fails its schema; its alerts are skipped", { buildId: build.id, path });
      return null;
    }
    return v ? v.events : null;
  };
  return {
    buildId: build.id,
    asOf: build.manifest.asOf,
    depeg: list<DepegEvent>(depeg, "site-data/depeg-events.json"),
    freezes: list<BlacklistEvent>(freezes, "site-data/blacklist-events.json"),
    grades: grades === null ? "missing" : grades,
  };
}

/** A build by id from published storage, or null when its manifest is absent or invalid. */
async function buildById(read: ObjectReader, id: string): Promise<ServingBuild | null> {
  try {
    const bytes = await read(`builds/${id}/manifest.json`);
    if (!bytes) return null;
    return new ServingBuild(BuildManifestSchema.parse(JSON.parse(Buffer.from(bytes).toString("utf8"))), 0, read);
  } catch {
    return null;
  }
}

/**
 * The alert dispatcher of one API process; any number of processes may share one state store.
 * See the module comment for tables, retries and concurrency.
 */
export class AlertDispatcher {
  private readonly o: Required<Omit<AlertDispatcherOptions, "onChatGone" | "alerts">> &
    Pick<AlertDispatcherOptions, "onChatGone" | "alerts">;
  private readonly steps: (() => Promise<void>)[];
  private readonly instance = randomUUID();

  constructor(opts: AlertDispatcherOptions) {
    this.o = { clockMode: "auto", nowMs: Date.now, ...DISPATCH_DEFAULTS, ...opts };
    this.steps = DDL.map((ddl) => schemaOnce(opts.sql, ddl));
  }

  private nowSec(): number {
    return Math.floor(this.o.nowMs() / 1000);
  }

  /** Creates the tables when missing. @throws when the state store is unreachable. */
  async init(): Promise<void> {
    for (const step of this.steps) await step();
  }

  private async state(): Promise<StateRow | null> {
    const { rows } = await this.o.sql.query<StateRow>(
      `select last_build_id, last_build_as_of, last_enqueued_at, safety_state, safety_age_sec, safety_generation, last_run_at, last_run_status
       from alert_dispatch_state where scope = $1`,
      [SCOPE],
    );
    return rows[0] ?? null;
  }

  /**
   * Computes the alerts `build` brings relative to the last dispatched build and enqueues one
   * delivery per (alert, following chat), moving the dispatch state to `build` in the same statement.
   * No previous build recorded: records `build` as the baseline and enqueues nothing; previous build
   * unreadable: same (`rebaseline`). `nowSec` (wall clock) stamps the rows; default the clock.
   * @throws when the state store, storage or the follower lookup fails (nothing stored then).
   */
  async enqueue(build: ServingBuild, nowSec = this.nowSec()): Promise<EnqueueResult> {
    await this.init();
    const st = await this.state();
    const prevId = st?.last_build_id ?? null;
    const none = (action: EnqueueResult["action"]): EnqueueResult => ({
      action,
      buildId: build.id,
      previousBuildId: prevId,
      alerts: [],
      deliveries: 0,
      diff: null,
    });
    if (prevId === build.id) return none("unchanged");
    const prevAsOf = num(st?.last_build_as_of);
    if (prevAsOf !== null && build.manifest.asOf < prevAsOf) return none("older");

    const prevBuild = prevId ? await buildById(this.o.read, prevId) : null;
    const [next, prev] = await Promise.all([alertSnapshot(build), prevBuild ? alertSnapshot(prevBuild) : null]);
    const dataNow = serviceNow(build, this.o.clockMode, nowSec * 1000).now;
    const diff = diffAlerts(prev, next, dataNow, this.o.alerts);
    if (prevId && !prevBuild)
      apiLog("warn", "alerts", "previously dispatched build unreadable; new baseline, nothing sent", {
        previousBuildId: prevId,
        buildId: build.id,
      });

    const followers = diff.alerts.length
      ? await this.o.followers.followersOf([...new Set(diff.alerts.map((a) => a.coinId))])
      : new Map<string, string[]>();
    const cols: unknown[][] = [[], [], [], [], [], [], []];
    diff.alerts.forEach((a, seq) => {
      for (const chat of new Set(followers.get(a.coinId) ?? [])) {
        const row = [a.id, chat, a.kind, a.coinId, build.id, seq, a.text];
        for (let i = 0; i < row.length; i++) cols[i].push(row[i]);
      }
    });
    const { rows } = await this.o.sql.query<{ advanced: number; inserted: number }>(
      `with st as (
         insert into alert_dispatch_state (scope, last_build_id, last_build_as_of, last_enqueued_at, last_alert_count, safety_state, safety_age_sec, safety_generation)
         values ($1, $2, $3::bigint, $4::bigint, $5::int, $6, $7::bigint, $8)
         on conflict (scope) do update set last_build_id = excluded.last_build_id, last_build_as_of = excluded.last_build_as_of,
           last_enqueued_at = excluded.last_enqueued_at, last_alert_count = excluded.last_alert_count, safety_state = excluded.safety_state,
           safety_age_sec = excluded.safety_age_sec, safety_generation = excluded.safety_generation
         where alert_dispatch_state.last_build_id is not distinct from $9::text
         returning 1
       ), ins as (
         insert into alert_deliveries (alert_id, chat_id, kind, coin_id, build_id, seq, text, next_attempt_at, created_at, updated_at)
         select u.alert_id, u.chat_id, u.kind, u.coin_id, u.build_id, u.seq, u.text, $4::bigint, $4::bigint, $4::bigint
         from unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::int[], $16::text[]) as u(alert_id, chat_id, kind, coin_id, build_id, seq, text)
         where exists (select 1 from st)
         on conflict (alert_id, chat_id) do nothing
         returning 1
       )
       select (select count(*) from st)::int as advanced, (select count(*) from ins)::int as inserted`,
      [
        SCOPE,
        build.id,
        build.manifest.asOf,
        nowSec,
        diff.alerts.length,
        diff.safety.state,
        diff.safety.ageSec,
        diff.safety.generation,
        prevId,
        ...cols,
      ],
    );
    const advanced = Number(rows[0]?.advanced ?? 0) > 0;
    const deliveries = Number(rows[0]?.inserted ?? 0);
    const action: EnqueueResult["action"] = !advanced
      ? "raced"
      : !prevId
        ? "baseline"
        : !prevBuild
          ? "rebaseline"
          : "enqueued";
    if (advanced) {
      apiLog("info", "alerts", "build dispatched", {
        action,
        buildId: build.id,
        previousBuildId: prevId,
        alerts: diff.alerts.length,
        deliveries,
        skipped: diff.skipped,
        safetySource: diff.safety.state,
      });
    }
    return {
      action,
      buildId: build.id,
      previousBuildId: prevId,
      alerts: advanced ? diff.alerts : [],
      deliveries,
      diff,
    };
  }

  /** Retry delay (s) after the `attempts`-th failed try: base × 2^(attempts−1), capped. */
  backoffSec(attempts: number): number {
    return Math.min(this.o.backoffMaxSec, this.o.backoffBaseSec * 2 ** Math.max(0, attempts - 1));
  }

  /**
   * Sends the deliveries due at `nowSec` (wall clock, Unix s; at most `batchSize`), one after another.
   * Sent rows become `sent`; a 429 reschedules the row at `retry_after` and releases the rest of the
   * batch to the same time (the bot is throttled as a whole); 5xx and network errors back off; other
   * 4xx fail the row at once. Claims are safe across instances.
   * @throws when the state store fails (a claimed row is then released by its lease).
   */
  async deliver(nowSec = this.nowSec()): Promise<DeliverResult> {
    await this.init();
    const token = `${this.instance}:${randomUUID()}`;
    const { rows } = await this.o.sql.query<{
      alert_id: string;
      chat_id: string;
      text: string;
      attempts: number;
      created_at: string | number;
      seq: number;
    }>(
      `update alert_deliveries set claimed_by = $1, next_attempt_at = $2::bigint + $3::bigint, updated_at = $2::bigint
       where (alert_id, chat_id) in (
         select alert_id, chat_id from alert_deliveries where status = 'pending' and next_attempt_at <= $2::bigint
         order by next_attempt_at, created_at, seq, chat_id limit $4 for update skip locked)
       returning alert_id, chat_id, text, attempts, created_at, seq`,
      [token, nowSec, this.o.leaseSec, this.o.batchSize],
    );
    rows.sort(
      (a, b) =>
        Number(a.created_at) - Number(b.created_at) ||
        a.seq - b.seq ||
        (a.chat_id < b.chat_id ? -1 : a.chat_id > b.chat_id ? 1 : 0),
    );
    const result: DeliverResult = { sent: 0, retried: 0, failed: 0, released: 0 };
    let pausedUntil: number | null = null;
    for (const row of rows) {
      if (pausedUntil !== null) break;
      const key = [row.alert_id, row.chat_id, token];
      try {
        const msg = await this.o.api.sendMessage(row.chat_id, row.text, {
          link_preview_options: { is_disabled: true },
        });
        await this.o.sql.query(
          `update alert_deliveries set status = 'sent', attempts = attempts + 1, sent_at = $4, updated_at = $4, message_id = $5, claimed_by = null, last_error = null
           where alert_id = $1 and chat_id = $2 and claimed_by = $3`,
          [...key, nowSec, msg.message_id],
        );
        result.sent++;
      } catch (err) {
        const attempts = Number(row.attempts) + 1;
        const description = err instanceof GrammyError ? `${err.error_code} ${err.description}` : errorMessage(err);
        const code = err instanceof GrammyError ? err.error_code : null;
        const permanent = code !== null && code >= 400 && code < 500 && code !== 429;
        if (permanent || attempts >= this.o.maxAttempts) {
          await this.o.sql.query(
            `update alert_deliveries set status = 'failed', attempts = $4, updated_at = $5, claimed_by = null, last_error = $6
             where alert_id = $1 and chat_id = $2 and claimed_by = $3`,
            [...key, attempts, nowSec, description],
          );
          result.failed++;
          if (permanent && this.o.onChatGone)
            await Promise.resolve(this.o.onChatGone(row.chat_id, description)).catch((e: unknown) =>
              apiLog("warn", "alerts", "onChatGone failed", { error: errorMessage(e) }),
            );
          apiLog(permanent ? "info" : "warn", "alerts", "delivery failed", {
            alertId: row.alert_id,
            chatId: row.chat_id,
            attempts,
            error: description,
          });
        } else {
          const retryAfter = code === 429 && err instanceof GrammyError ? err.parameters.retry_after : undefined;
          const delay = retryAfter !== undefined ? Math.max(1, retryAfter) : this.backoffSec(attempts);
          if (code === 429) pausedUntil = nowSec + delay;
          await this.o.sql.query(
            `update alert_deliveries set attempts = $4, next_attempt_at = $5, updated_at = $6, claimed_by = null, last_error = $7
             where alert_id = $1 and chat_id = $2 and claimed_by = $3`,
            [...key, attempts, nowSec + delay, nowSec, description],
          );
          result.retried++;
        }
      }
    }
    if (pausedUntil !== null) {
      const { rows: released } = await this.o.sql.query(
        "update alert_deliveries set claimed_by = null, next_attempt_at = $2 where claimed_by = $1 and status = 'pending' returning 1",
        [token, pausedUntil],
      );
      result.released = released.length;
    }
    return result;
  }

  /** Deletes sent and failed rows last updated before `nowSec − retentionSec`; returns how many. */
  async prune(nowSec = this.nowSec()): Promise<number> {
    await this.init();
    const { rows } = await this.o.sql.query(
      "delete from alert_deliveries where status <> 'pending' and updated_at < $1 returning 1",
      [nowSec - this.o.retentionSec],
    );
    return rows.length;
  }

  /**
   * One run of the job: enqueue `build` (when given and not yet dispatched), deliver what is due
   * (also when the enqueue failed), prune old rows, and record the run (`lastDispatchAt`, `lastDispatchStatus`). Never throws: a
   * failure is the `error` status (recorded when the store is reachable) and logged.
   */
  async runOnce(build: ServingBuild | null): Promise<RunResult> {
    const nowSec = this.nowSec();
    let enqueue: EnqueueResult | null = null;
    let deliver: DeliverResult | null = null;
    let status: RunStatus;
    let error: string | null = null;
    const failed = (err: unknown, step: string) => {
      error ??= errorMessage(err);
      apiLog("error", "alerts", `alert dispatch ${step} failed`, {
        error: errorMessage(err),
        buildId: build?.id ?? null,
      });
    };
    // A build that cannot be enqueued (storage, follower lookup) does not hold back what is queued.
    if (build)
      await this.enqueue(build, nowSec).then(
        (r) => {
          enqueue = r;
        },
        (err: unknown) => failed(err, "enqueue"),
      );
    try {
      deliver = await this.deliver(nowSec);
      await this.prune(nowSec);
    } catch (err) {
      failed(err, "delivery");
    }
    const e = enqueue as EnqueueResult | null;
    // `deliver` is set whenever no step failed (a failed step sets `error`).
    if (error !== null || deliver === null) status = "error";
    else if (deliver.retried + deliver.released > 0) status = "retrying";
    else status = e?.action === "baseline" || e?.action === "rebaseline" ? e.action : "ok";
    try {
      await this.init();
      await this.o.sql.query(
        `insert into alert_dispatch_state (scope, last_run_at, last_run_status, last_error) values ($1, $2, $3, $4)
         on conflict (scope) do update set last_run_at = excluded.last_run_at, last_run_status = excluded.last_run_status, last_error = excluded.last_error`,
        [SCOPE, nowSec, status, error],
      );
    } catch (err) {
      apiLog("error", "alerts", "alert dispatch run not recorded", { error: errorMessage(err) });
    }
    return { status, enqueue, deliver, error };
  }

  /**
   * Health's dispatch fields (spec 2.8 `telegramSummary` but `totalChats`) at `nowSec` (wall clock,
   * Unix s): pending deliveries, the backlog (pending and due for longer than `backlogGraceSec`), the
   * last run, and the safety-grade source of the last dispatched build, its age carried forward
   * (`ok` turns `stale` once the age passes the budget; `safetyAlertsSuppressed` when not `ok`).
   * Never throws: an unreachable store gives `pendingDeliveries` null, lifecycle `unknown`.
   */
  async status(nowSec = this.nowSec()): Promise<DispatchStatus> {
    try {
      await this.init();
      const [st, counts] = await Promise.all([
        this.state(),
        this.o.sql.query<{ pending: string | number; backlog: string | number }>(
          `select count(*) filter (where status = 'pending')::int as pending,
                  count(*) filter (where status = 'pending' and next_attempt_at <= $1)::int as backlog
           from alert_deliveries`,
          [nowSec - this.o.backlogGraceSec],
        ),
      ]);
      const enqueuedAt = num(st?.last_enqueued_at);
      const storedAge = num(st?.safety_age_sec);
      const ageSec = storedAge !== null && enqueuedAt !== null ? storedAge + Math.max(0, nowSec - enqueuedAt) : null;
      let state = (st?.safety_state ?? null) as SafetySourceState | null;
      const maxAge = this.o.alerts?.safetyMaxAgeSec ?? SAFETY_SOURCE_MAX_AGE_SEC;
      if (state === "ok" && ageSec !== null && ageSec > maxAge) state = "stale";
      return {
        pendingDeliveries: Number(counts.rows[0]?.pending ?? 0),
        pendingDeliveryLifecycleStatus: "available",
        pendingDeliveryBacklog: Number(counts.rows[0]?.backlog ?? 0),
        lastDispatchAt: num(st?.last_run_at),
        lastDispatchStatus: st?.last_run_status ?? null,
        safetyAlertSourceState: state,
        safetyAlertSourceAgeSeconds: ageSec,
        safetyAlertsSuppressed: state !== null && state !== "ok",
        safetyAlertSourceGeneration: st?.safety_generation ?? null,
      };
    } catch (err) {
      apiLog("warn", "alerts", "dispatch status unreadable", { error: errorMessage(err) });
      return { ...UNKNOWN_DISPATCH_STATUS };
    }
  }
}

/** A running dispatch loop. */
export interface AlertLoop {
  /** Runs again soon (the serving build changed); a run in progress is followed by one more. */
  kick(): void;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `dispatcher.runOnce(await currentBuild())` now, then every `intervalMs` (default 60 000) and
 * whenever `kick()` is called; runs never overlap. The timer does not keep the process alive.
 */
export function startAlertLoop(
  dispatcher: AlertDispatcher,
  currentBuild: () => Promise<ServingBuild | null>,
  intervalMs = 60_000,
): AlertLoop {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(run, intervalMs);
    timer.unref();
  };
  const run = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        await dispatcher.runOnce(await currentBuild().catch(() => null));
      } finally {
        running = null;
        if (again && !stopped) {
          again = false;
          run();
        } else schedule();
      }
    })();
  };
  run();
  return {
    kick: () => {
      if (!stopped) run();
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
