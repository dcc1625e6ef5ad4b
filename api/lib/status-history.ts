import type { HealthStatus, StatusCause, StatusHistoryHealth } from "../health.ts";
import type { SqlClient } from "./key-store.ts";
import { dependencyReason } from "./dependency-reason.ts";
import { apiLog, errorMessage } from "./log.ts";

/**
 * Public status history (spec 2.9): the API process that assesses health records its raw status
 * (the `/api/health` status) and causes; a hysteresis state machine turns raw observations into a
 * public status that changes only on sustained evidence, and every change is a transition row.
 * State and transitions live in the state store (`status_state`, `status_transitions`), so every
 * API instance sharing it writes one history. All times here are wall-clock Unix seconds; routes
 * shift them onto their service clock.
 */

/** One rule of the hysteresis table: move when the raw status was seen `minConsecutive` times in a row and the current status has lasted `minDwellSec`. */
export interface HysteresisRule {
  minConsecutive: number;
  minDwellSec: number;
  /** Transition `reason` code. */
  reason: string;
}

/**
 * Hysteresis table, current status → raw status → rule (a raw status equal to the current one
 * holds). Escalation is fast (healthy → stale on the first raw stale), recovery slow:
 * - healthy → stale: 1 raw stale; healthy → degraded: 2 consecutive raw degraded;
 * - degraded → stale: 2 consecutive raw stale; degraded → healthy: 3 consecutive raw healthy and ≥ 120 s in degraded;
 * - stale → degraded: 2 consecutive raw degraded and ≥ 180 s in stale; stale → healthy: 3 consecutive raw healthy and ≥ 180 s.
 */
export const STATUS_HYSTERESIS: Readonly<Record<HealthStatus, Partial<Record<HealthStatus, HysteresisRule>>>> = {
  healthy: {
    stale: { minConsecutive: 1, minDwellSec: 0, reason: "raw-stale-immediate-escalation" },
    degraded: { minConsecutive: 2, minDwellSec: 0, reason: "raw-degraded-threshold" },
  },
  degraded: {
    stale: { minConsecutive: 2, minDwellSec: 0, reason: "raw-stale-threshold" },
    healthy: { minConsecutive: 3, minDwellSec: 120, reason: "raw-healthy-recovery-threshold" },
  },
  stale: {
    degraded: { minConsecutive: 2, minDwellSec: 180, reason: "raw-degraded-recovery-threshold" },
    healthy: { minConsecutive: 3, minDwellSec: 180, reason: "raw-healthy-recovery-threshold" },
  },
};

/** Observations further apart than this (s) are not consecutive: the run counts restart (no evaluation for 30 min). */
export const STATUS_SYSTEM_FRESHNESS_SEC = 1800;

const SEVERITY: Record<HealthStatus, number> = { healthy: 0, degraded: 1, stale: 2 };
const STATUSES: readonly HealthStatus[] = ["healthy", "degraded", "stale"];

/** One raw health assessment: status and causes as `/api/health` computed them, `at` wall-clock Unix s. */
export interface StatusObservation {
  raw: HealthStatus;
  causes: StatusCause[];
  at: number;
}

/** The persisted hysteresis state (one row per scope). Times wall-clock Unix s. */
export interface StatusState {
  currentStatus: HealthStatus;
  rawStatus: HealthStatus;
  lastEvaluatedAt: number;
  lastChangedAt: number;
  /** Consecutive raw observations of each status ending with the latest (only one is non-zero). */
  consecutive: Record<HealthStatus, number>;
  /** Causes of the latest raw observation. */
  causes: StatusCause[];
  /** Compare-and-set counter: every write increments it (0 before the first write). */
  version: number;
}

/** A change of the public status: `from` null for the first observation (`init`); `at` wall-clock Unix s. */
export interface StatusTransition {
  from: HealthStatus | null;
  to: HealthStatus;
  rawStatus: HealthStatus;
  transitionType: "init" | "degrade" | "recover";
  /** Rule code (STATUS_HYSTERESIS reasons, or `initial-observation`). */
  reason: string;
  /** Causes of the raw observation that moved it. */
  causes: StatusCause[];
  at: number;
}

/** A stored transition with its id (ascending with time). */
export interface StoredTransition extends StatusTransition {
  id: number;
}

/** What `evaluate` decided: the next state, the transition when the status moved, and why (`hysteresis-hold`, `steady`, or the rule). */
export interface Evaluation {
  state: StatusState;
  transition: StatusTransition | null;
  reason: string;
}

/**
 * Applies one raw observation to the hysteresis state (pure). Without a state the first observation
 * sets it (`init`, reason `initial-observation`). Otherwise the run count of the raw status grows
 * (others reset; a gap over STATUS_SYSTEM_FRESHNESS_SEC since the previous observation restarts
 * every count), and the status moves when STATUS_HYSTERESIS[current][raw] is met: run count ≥
 * `minConsecutive` and `obs.at − lastChangedAt` ≥ `minDwellSec`. Otherwise it holds
 * (`hysteresis-hold`; `steady` when raw equals the current status). `version` is left to the store.
 */
export function evaluate(prev: StatusState | null, obs: StatusObservation): Evaluation {
  const raw = obs.raw;
  if (!prev) {
    const state: StatusState = {
      currentStatus: raw,
      rawStatus: raw,
      lastEvaluatedAt: obs.at,
      lastChangedAt: obs.at,
      consecutive: { healthy: 0, degraded: 0, stale: 0, [raw]: 1 },
      causes: obs.causes,
      version: 0,
    };
    return {
      state,
      transition: {
        from: null,
        to: raw,
        rawStatus: raw,
        transitionType: "init",
        reason: "initial-observation",
        causes: obs.causes,
        at: obs.at,
      },
      reason: "initial-observation",
    };
  }
  const gap = obs.at - prev.lastEvaluatedAt > STATUS_SYSTEM_FRESHNESS_SEC;
  const run = (gap ? 0 : prev.consecutive[raw]) + 1;
  const consecutive = Object.fromEntries(STATUSES.map((s) => [s, s === raw ? run : 0])) as Record<HealthStatus, number>;
  const base: StatusState = { ...prev, rawStatus: raw, lastEvaluatedAt: obs.at, consecutive, causes: obs.causes };
  const rule = STATUS_HYSTERESIS[prev.currentStatus][raw];
  if (!rule) return { state: base, transition: null, reason: "steady" };
  if (run < rule.minConsecutive || obs.at - prev.lastChangedAt < rule.minDwellSec)
    return { state: base, transition: null, reason: "hysteresis-hold" };
  const transition: StatusTransition = {
    from: prev.currentStatus,
    to: raw,
    rawStatus: raw,
    transitionType: SEVERITY[raw] > SEVERITY[prev.currentStatus] ? "degrade" : "recover",
    reason: rule.reason,
    causes: obs.causes,
    at: obs.at,
  };
  return { state: { ...base, currentStatus: raw, lastChangedAt: obs.at }, transition, reason: rule.reason };
}

/** Whether a transition's causes include one with public impact. */
export function transitionHasPublicImpact(t: StatusTransition): boolean {
  return t.causes.some((c) => c.publicImpact);
}

/**
 * The rows the public history shows (spec 2.9), from `rows` in ascending time order that start at
 * or before the last move to `healthy` before the window (so an incident open at the window's start
 * is known): walking them in order, a row that moves away from `healthy`-or-holds with a
 * public-impact cause opens an incident; every row while an incident is open is kept, and the move
 * to `healthy` that closes it too. Rows of incidents opened only by non-public causes are left out.
 * Returns the kept rows with `at` ≥ `from`, ascending.
 */
export function publicTransitions(rows: readonly StoredTransition[], from: number): StoredTransition[] {
  const out: StoredTransition[] = [];
  let open = false;
  for (const t of rows) {
    let keep: boolean;
    if (t.to === "healthy") {
      keep = open;
      open = false;
    } else if (open) keep = true;
    else keep = open = transitionHasPublicImpact(t);
    if (keep && t.at >= from) out.push(t);
  }
  return out;
}

/** `reason` as the public sees it: the rule code, then the public-impact causes (codes and status) of the observation; non-public causes are never named. */
export function publicReason(t: StatusTransition): string {
  const pub = t.causes.filter((c) => c.publicImpact).map((c) => `${c.code} ${c.status}`);
  return pub.length ? `${t.reason}: ${[...new Set(pub)].join(", ")}` : t.reason;
}

/** Status tables, one statement each (PGlite's `query` takes one statement). */
const SCHEMA = [
  `
create table if not exists status_state (
  scope text primary key,
  current_status text not null,
  raw_status text not null,
  last_evaluated_at bigint not null,
  last_changed_at bigint not null,
  consecutive_healthy integer not null,
  consecutive_degraded integer not null,
  consecutive_stale integer not null,
  causes_json jsonb not null,
  updated_at bigint not null,
  version bigint not null
)`,
  `
create table if not exists status_transitions (
  id bigserial primary key,
  scope text not null,
  previous_status text,
  next_status text not null,
  raw_status text not null,
  transition_type text not null,
  reason text not null,
  causes_json jsonb not null,
  created_at bigint not null
)`,
  "create index if not exists status_transitions_scope_created on status_transitions (scope, created_at, id)",
];

type StateRow = {
  current_status: HealthStatus;
  raw_status: HealthStatus;
  last_evaluated_at: string | number;
  last_changed_at: string | number;
  consecutive_healthy: number;
  consecutive_degraded: number;
  consecutive_stale: number;
  causes_json: StatusCause[] | string;
  version: string | number;
};
type TransitionRow = {
  id: string | number;
  previous_status: HealthStatus | null;
  next_status: HealthStatus;
  raw_status: HealthStatus;
  transition_type: StatusTransition["transitionType"];
  reason: string;
  causes_json: StatusCause[] | string;
  created_at: string | number;
};
const json = <T>(v: T | string): T => (typeof v === "string" ? (JSON.parse(v) as T) : v);

/** Rows the public query walks at most (the newest; 30 days at one transition per 2 min is 21,600). */
export const STATUS_QUERY_ROW_CAP = 25_000;
/** Transitions older than this (s) are deleted after writes (at most once an hour). */
export const STATUS_RETENTION_SEC = 90 * 86400;

/** Options of `StatusHistoryStore`. */
export interface StatusHistoryStoreOptions {
  /** State row key (default `global`). */
  scope?: string;
  /** Deadline (ms) of one read (`state`, `publicHistory`); default 1000. */
  readDeadlineMs?: number;
  /** Deadline (ms) of one `record` call; default 5000. */
  writeDeadlineMs?: number;
}

/**
 * The status tables in the state store (PGlite or Postgres; same `SqlClient` as the key store). The
 * schema is created by the first call that reaches the store (`create table if not exists`, like the
 * key table), retried on the next call after a failure. Every call runs under a deadline and throws
 * on failure (callers decide: the recorder keeps its observations, the route answers 503).
 */
export class StatusHistoryStore {
  private schemaReady: Promise<void> | null = null;
  private readonly scope: string;
  private readonly readDeadlineMs: number;
  private readonly writeDeadlineMs: number;
  private lastPruneAt = -Infinity;

  constructor(
    private readonly sql: SqlClient,
    opts: StatusHistoryStoreOptions = {},
  ) {
    this.scope = opts.scope ?? "global";
    this.readDeadlineMs = opts.readDeadlineMs ?? 1000;
    this.writeDeadlineMs = opts.writeDeadlineMs ?? 5000;
  }

  private ensureSchema(): Promise<void> {
    this.schemaReady ??= (async () => {
      for (const stmt of SCHEMA) await this.sql.query(stmt);
    })().then(
      () => undefined,
      (err: unknown) => {
        this.schemaReady = null;
        throw err;
      },
    );
    return this.schemaReady;
  }

  private async within<T>(what: string, ms: number, op: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`status history: ${what} got no answer within ${ms} ms`)), ms);
    });
    try {
      return await Promise.race([this.ensureSchema().then(op), deadline]);
    } catch (err) {
      throw err instanceof Error && err.message.startsWith("status history:")
        ? err
        : new Error(`status history: ${what} failed: ${errorMessage(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  private async readState(): Promise<StatusState | null> {
    const { rows } = await this.sql.query<StateRow>(
      "select current_status, raw_status, last_evaluated_at, last_changed_at, consecutive_healthy, consecutive_degraded, consecutive_stale, causes_json, version from status_state where scope = $1",
      [this.scope],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      currentStatus: r.current_status,
      rawStatus: r.raw_status,
      lastEvaluatedAt: Number(r.last_evaluated_at),
      lastChangedAt: Number(r.last_changed_at),
      consecutive: {
        healthy: Number(r.consecutive_healthy),
        degraded: Number(r.consecutive_degraded),
        stale: Number(r.consecutive_stale),
      },
      causes: json(r.causes_json),
      version: Number(r.version),
    };
  }

  /** The persisted hysteresis state, or null before the first observation. @throws Error on store failure or deadline. */
  state(): Promise<StatusState | null> {
    return this.within("state read", this.readDeadlineMs, () => this.readState());
  }

  /**
   * Writes `next` and `transitions` if the stored state is still `prev` (compare-and-set on
   * `version`, or insert-if-absent), in one statement, so the state and its transitions commit
   * together. A concurrent writer's row lock makes the loser re-check the version and write
   * nothing. Returns whether it wrote.
   */
  private async write(
    prev: StatusState | null,
    next: StatusState,
    transitions: StatusTransition[],
    wallNow: number,
  ): Promise<boolean> {
    const trs = JSON.stringify(
      transitions.map((t) => ({
        previous_status: t.from,
        next_status: t.to,
        raw_status: t.rawStatus,
        transition_type: t.transitionType,
        reason: t.reason,
        causes_json: t.causes,
        created_at: t.at,
      })),
    );
    const values = [
      this.scope,
      next.currentStatus,
      next.rawStatus,
      next.lastEvaluatedAt,
      next.lastChangedAt,
      next.consecutive.healthy,
      next.consecutive.degraded,
      next.consecutive.stale,
      JSON.stringify(next.causes),
      wallNow,
      trs,
    ];
    const insertTransitions = (from: string) => `tr as (
      insert into status_transitions (scope, previous_status, next_status, raw_status, transition_type, reason, causes_json, created_at)
      select $1, e.v->>'previous_status', e.v->>'next_status', e.v->>'raw_status', e.v->>'transition_type', e.v->>'reason', e.v->'causes_json', (e.v->>'created_at')::bigint
      from ${from}, jsonb_array_elements($11::jsonb) with ordinality as e(v, n)
      order by e.n
      returning 1
    )`;
    const sql =
      prev === null
        ? `with w as (
          insert into status_state (scope, current_status, raw_status, last_evaluated_at, last_changed_at, consecutive_healthy, consecutive_degraded, consecutive_stale, causes_json, updated_at, version)
          values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, 1)
          on conflict (scope) do nothing
          returning version
        ), ${insertTransitions("w")}
        select count(*)::int as n from w`
        : `with w as (
          update status_state set current_status = $2, raw_status = $3, last_evaluated_at = $4, last_changed_at = $5, consecutive_healthy = $6,
            consecutive_degraded = $7, consecutive_stale = $8, causes_json = $9::jsonb, updated_at = $10, version = version + 1
          where scope = $1 and version = $12
          returning version
        ), ${insertTransitions("w")}
        select count(*)::int as n from w`;
    const { rows } = await this.sql.query<{ n: number }>(sql, prev === null ? values : [...values, prev.version]);
    return Number(rows[0]?.n ?? 0) === 1;
  }

  /**
   * Applies `observations` (ascending `at`, wall-clock Unix s) to the stored state with `evaluate`
   * and writes the result with its transitions atomically. An observation less than
   * `minSpacingSec` (at least 1) after the stored state's latest is skipped: several instances
   * observing the same moment count once, and a stale observation never rewinds the state. When
   * another instance wrote in between (compare-and-set lost), the state is re-read and the
   * observations re-applied, up to 5 times. Returns the transitions written (none when every
   * observation was skipped).
   * @throws Error on store failure or deadline (nothing is written then).
   */
  record(
    observations: readonly StatusObservation[],
    opts: { minSpacingSec?: number; wallNow?: number } = {},
  ): Promise<{ written: number; transitions: StatusTransition[]; state: StatusState | null }> {
    const spacing = Math.max(1, opts.minSpacingSec ?? 1);
    const sorted = [...observations].sort((a, b) => a.at - b.at);
    const wallNow = opts.wallNow ?? sorted.at(-1)?.at ?? 0;
    return this.within("record", this.writeDeadlineMs, async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        const prev = await this.readState();
        let state = prev;
        let written = 0;
        const transitions: StatusTransition[] = [];
        for (const obs of sorted) {
          if (state && obs.at - state.lastEvaluatedAt < spacing) continue;
          const ev = evaluate(state, obs);
          state = { ...ev.state, version: prev?.version ?? 0 };
          if (ev.transition) transitions.push(ev.transition);
          written++;
        }
        if (!written || !state) return { written: 0, transitions: [], state: prev };
        if (await this.write(prev, state, transitions, wallNow)) {
          await this.prune(wallNow);
          return { written, transitions, state: { ...state, version: (prev?.version ?? 0) + 1 } };
        }
      }
      throw new Error("status history: record lost the compare-and-set 5 times (concurrent writers)");
    });
  }

  /** Deletes transitions past STATUS_RETENTION_SEC, at most once an hour per process; a failure is only logged. */
  private async prune(wallNow: number): Promise<void> {
    if (wallNow - this.lastPruneAt < 3600) return;
    this.lastPruneAt = wallNow;
    await this.sql
      .query("delete from status_transitions where scope = $1 and created_at < $2", [
        this.scope,
        wallNow - STATUS_RETENTION_SEC,
      ])
      .catch((err: unknown) =>
        apiLog("warn", "status-history", "pruning old transitions failed", { error: errorMessage(err) }),
      );
  }

  /**
   * The public history at `wallNow` (wall-clock Unix s): the state and the transitions of the last
   * `windowSec` seconds that `publicTransitions` keeps, newest first, at most `limit`.
   * @throws Error on store failure or deadline (the route answers 503).
   */
  publicHistory(q: {
    wallNow: number;
    windowSec: number;
    limit: number;
  }): Promise<{ state: StatusState | null; transitions: StoredTransition[] }> {
    const from = q.wallNow - q.windowSec;
    return this.within("public history read", this.readDeadlineMs, async () => {
      const [state, { rows }] = await Promise.all([
        this.readState(),
        // Rows of the window plus those since the last move to healthy before it: an incident open at the window's start is known.
        this.sql.query<TransitionRow>(
          `select id, previous_status, next_status, raw_status, transition_type, reason, causes_json, created_at
           from status_transitions
           where scope = $1 and created_at >= coalesce((select max(created_at) from status_transitions where scope = $1 and next_status = 'healthy' and created_at < $2), 0)
           order by created_at desc, id desc
           limit $3`,
          [this.scope, from, STATUS_QUERY_ROW_CAP],
        ),
      ]);
      const ascending = rows.reverse().map(
        (r): StoredTransition => ({
          id: Number(r.id),
          from: r.previous_status,
          to: r.next_status,
          rawStatus: r.raw_status,
          transitionType: r.transition_type,
          reason: r.reason,
          causes: json(r.causes_json),
          at: Number(r.created_at),
        }),
      );
      return { state, transitions: publicTransitions(ascending, from).reverse().slice(0, q.limit) };
    });
  }
}

/** What the recorder observes: the raw status and causes of the health assessment (`assessHealth`). */
export type StatusObserver = () => Promise<{ raw: HealthStatus; causes: StatusCause[] }>;

/** Options of `StatusRecorder`. */
export interface StatusRecorderOptions {
  history: StatusHistoryStore;
  observe: StatusObserver;
  /** Seconds between observations; 0 turns recording off. Observations less than half of it apart (fleet-wide) count once. */
  intervalSec: number;
  /** Wall clock in ms (injectable); default Date.now. */
  nowMs?: () => number;
  /** Observations kept in memory while the store fails (oldest dropped first); default 120. */
  maxPending?: number;
}

/**
 * Records the health this process observes into the status history: every `intervalSec` (timer
 * unref'd, so it never keeps the process alive) it assesses health (`observe`) and writes the
 * observation (`StatusHistoryStore.record`). Never throws and never runs in a request: a failed
 * write is logged once per outage, reported by `status()` (health `statusHistory`), and its
 * observations are kept (at most `maxPending`) and written in order when the store answers again,
 * so an outage of the store itself (`db-unhealthy`) appears in the history once it is back.
 */
export class StatusRecorder {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | null = null;
  private pending: StatusObservation[] = [];
  private current: StatusHistoryHealth;
  private readonly nowMs: () => number;
  private readonly maxPending: number;

  constructor(private readonly opts: StatusRecorderOptions) {
    this.nowMs = opts.nowMs ?? Date.now;
    this.maxPending = opts.maxPending ?? 120;
    this.current = {
      state: opts.intervalSec > 0 ? "ok" : "off",
      lastError: null,
      lastRecordedAt: null,
      pendingObservations: 0,
      intervalSec: opts.intervalSec,
    };
  }

  /** Starts the timer (first observation at once); no-op when recording is off or already started. */
  start(): void {
    if (this.opts.intervalSec <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      void this.tick();
    }, this.opts.intervalSec * 1000);
    this.timer.unref();
    void this.tick();
  }

  /** Stops the timer and waits for an observation in flight (call before closing the state store). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /** Recording status for health (copy; `lastRecordedAt` wall-clock Unix s). */
  status(): StatusHistoryHealth {
    return { ...this.current, pendingObservations: this.pending.length };
  }

  /** One observation and write (joins one already in flight). Never throws. */
  tick(): Promise<void> {
    this.inFlight ??= this.run().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async run(): Promise<void> {
    const at = Math.floor(this.nowMs() / 1000);
    try {
      const { raw, causes } = await this.opts.observe();
      this.pending.push({ raw, causes, at });
      if (this.pending.length > this.maxPending) this.pending.splice(0, this.pending.length - this.maxPending);
    } catch (err) {
      apiLog("warn", "status-history", "health assessment for the status history failed", { error: errorMessage(err) });
    }
    if (!this.pending.length) return;
    try {
      const batch = this.pending;
      const res = await this.opts.history.record(batch, {
        minSpacingSec: Math.floor(this.opts.intervalSec / 2),
        wallNow: at,
      });
      this.pending = this.pending.slice(batch.length);
      if (this.current.state === "unavailable")
        apiLog("info", "status-history", "status history recording works again", { written: res.written });
      for (const t of res.transitions)
        apiLog("info", "status-history", `status ${t.from ?? "(none)"} → ${t.to}`, { reason: t.reason, at: t.at });
      // The newest observation the store took: written, or skipped as within the spacing of another instance's.
      this.current = { ...this.current, state: "ok", lastError: null, lastRecordedAt: batch[batch.length - 1].at };
    } catch (err) {
      if (this.current.state !== "unavailable")
        apiLog(
          "warn",
          "status-history",
          "status history recording failed; observations are kept and written once the store answers",
          { error: errorMessage(err) },
        );
      // Health is public: a generic reason only (the driver's text, with hosts and ports, is logged above).
      this.current = { ...this.current, state: "unavailable", lastError: `status history: ${dependencyReason(err)}` };
    }
  }
}
