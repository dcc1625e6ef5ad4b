import { HttpError } from "./http-error.ts";
import type { SqlClient } from "./key-store.ts";
import { apiLog, errorMessage } from "./log.ts";
import { schemaOnce } from "./sql-schema.ts";

/**
 * Maintenance mode (spec 7, issue 19 item 6): while on, every public-listener `/api/*` request but
 * CORS preflights answers 503 `{ error: "maintenance", message }` with `Retry-After: 300` (health
 * included, as the reference's gate runs before routing; static files keep serving). Switched at run
 * time from the operator lane and stored in the state store (`ops_settings`), so every instance
 * sharing the store follows within about a second; `MAINTENANCE_MODE=true` forces it on from the
 * environment (useful when the state store itself is under maintenance).
 */

/** Default message of the maintenance answer. */
export const DEFAULT_MAINTENANCE_MESSAGE = "Ballast is undergoing a brief maintenance. Please retry in a few minutes.";
/** `Retry-After` of the maintenance answer (s). */
export const MAINTENANCE_RETRY_AFTER_SEC = 300;

/** The maintenance switch as stored. `updatedAt` Unix s (null: never switched). */
export interface MaintenanceState {
  enabled: boolean;
  message: string;
  updatedAt: number | null;
  /** Operator who switched it last (subject of their access identity). */
  updatedBy: string | null;
  /** True when `MAINTENANCE_MODE=true` forces it on whatever is stored. */
  forcedByEnv: boolean;
}

const SCHEMA = `
create table if not exists ops_settings (
  name text primary key,
  value text not null,
  updated_at bigint not null,
  updated_by text
)`;

/** Options of {@link MaintenanceGate}. */
export interface MaintenanceOptions {
  /** Re-read the stored switch at most this often (ms); default 1000. */
  refreshMs?: number;
  /** `MAINTENANCE_MODE=true`: on whatever is stored. */
  forced?: boolean;
  nowMs?: () => number;
}

/**
 * The maintenance switch of one process: a cached copy of the stored state, refreshed in the
 * background at most every `refreshMs` when read, and awaited when older than 5 × refreshMs (an idle
 * instance does not answer its first request from an old copy). A failed read keeps the last known
 * state (logged once per outage).
 */
export class MaintenanceGate {
  private state: MaintenanceState;
  private readAt = -Infinity;
  private refreshing: Promise<void> | null = null;
  private readonly ensureSchema: () => Promise<void>;
  private failing = false;
  private readonly refreshMs: number;
  private readonly nowMs: () => number;

  constructor(
    private readonly sql: SqlClient | null,
    opts: MaintenanceOptions = {},
  ) {
    this.refreshMs = opts.refreshMs ?? 1000;
    this.nowMs = opts.nowMs ?? Date.now;
    this.state = {
      enabled: false,
      message: DEFAULT_MAINTENANCE_MESSAGE,
      updatedAt: null,
      updatedBy: null,
      forcedByEnv: opts.forced === true,
    };
    this.ensureSchema = sql ? schemaOnce(sql, SCHEMA) : async () => undefined;
  }

  private effective(): MaintenanceState {
    return this.state.forcedByEnv ? { ...this.state, enabled: true } : { ...this.state };
  }

  /**
   * Whether maintenance is known to be off right now, without waiting or allocating (starts a
   * background refresh when due). The fast path uses it on every request: false (on, or a copy too old
   * to trust) sends the request the slow way, which awaits {@link current}.
   */
  knownOff(): boolean {
    const age = this.nowMs() - this.readAt;
    if (age >= this.refreshMs) void this.refresh();
    return !this.state.enabled && !this.state.forcedByEnv && (age < 5 * this.refreshMs || !this.sql);
  }

  /** The state, re-read first when the cached copy is older than 5 × refreshMs. Never throws. */
  async current(): Promise<MaintenanceState> {
    const age = this.nowMs() - this.readAt;
    if (age >= 5 * this.refreshMs) await this.refresh();
    else if (age >= this.refreshMs) void this.refresh();
    return this.effective();
  }

  /** Throws the maintenance answer (HttpError 503) when on. */
  async check(): Promise<void> {
    const s = await this.current();
    if (s.enabled) throw maintenanceError(s.message);
  }

  /** Reads the stored switch now (single flight). Never throws. */
  refresh(): Promise<void> {
    if (!this.sql) return Promise.resolve();
    const sql = this.sql;
    this.refreshing ??= (async () => {
      try {
        await this.ensureSchema();
        const { rows } = await sql.query<{ value: string; updated_at: string | number; updated_by: string | null }>(
          "select value, updated_at, updated_by from ops_settings where name = 'maintenance'",
        );
        const row = rows[0];
        const v = row ? (JSON.parse(row.value) as { enabled?: unknown; message?: unknown }) : {};
        this.state = {
          enabled: v.enabled === true,
          message: typeof v.message === "string" && v.message ? v.message : DEFAULT_MAINTENANCE_MESSAGE,
          updatedAt: row ? Number(row.updated_at) : null,
          updatedBy: row?.updated_by ?? null,
          forcedByEnv: this.state.forcedByEnv,
        };
        if (this.failing) apiLog("info", "maintenance", "maintenance switch readable again");
        this.failing = false;
      } catch (err) {
        if (!this.failing)
          apiLog("warn", "maintenance", "maintenance switch unreadable; keeping the last known state", {
            error: errorMessage(err),
            enabled: this.state.enabled,
          });
        this.failing = true;
      } finally {
        this.readAt = this.nowMs();
      }
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /**
   * Stores the switch (every instance follows within about `refreshMs`) and returns the new state.
   * @throws HttpError 503 when the state store cannot be written (nothing changed).
   */
  async set(enabled: boolean, message: string | undefined, by: string): Promise<MaintenanceState> {
    if (!this.sql) throw new HttpError(503, "Maintenance switch unavailable: no state store");
    const value = JSON.stringify({ enabled, message: message?.trim() || DEFAULT_MAINTENANCE_MESSAGE });
    const now = Math.floor(this.nowMs() / 1000);
    try {
      await this.ensureSchema();
      await this.sql.query(
        `insert into ops_settings (name, value, updated_at, updated_by) values ('maintenance', $1, $2, $3)
         on conflict (name) do update set value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
        [value, now, by],
      );
    } catch (err) {
      apiLog("error", "maintenance", "maintenance switch not stored", { error: errorMessage(err) });
      throw new HttpError(503, "Public API temporarily unavailable", { "Retry-After": "60" });
    }
    // A read in flight may have started before the write: let it land, then take what was written.
    await this.refreshing;
    this.state = {
      enabled,
      message: JSON.parse(value).message,
      updatedAt: now,
      updatedBy: by,
      forcedByEnv: this.state.forcedByEnv,
    };
    this.readAt = this.nowMs();
    return this.effective();
  }
}

/** The maintenance answer: 503 `{ error: "maintenance", message }`, `Retry-After: 300`. */
export function maintenanceError(message: string): HttpError {
  return new HttpError(503, "maintenance", { "Retry-After": String(MAINTENANCE_RETRY_AFTER_SEC) }, { message });
}
