import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { HttpError } from "./http-error.ts";
import type { SqlClient } from "./key-store.ts";
import { apiLog, errorMessage } from "./log.ts";
import { schemaOnce } from "./sql-schema.ts";

/**
 * Admin idempotency (spec 4.5, reference 6.1): a request carrying `Idempotency-Key` on an idempotent
 * operator route is reserved under (action, key) in the state store before it runs, so two identical
 * requests run the action once; later identical requests replay the stored response with
 * `Idempotency-Key` and `X-Idempotent-Replay: true`; the same key with a different request (its
 * fingerprint) is 409. Rows older than 7 days are pruned.
 *
 * `response_status`: the HTTP status once terminal, -1 while reserved (running), -2 when the action
 * threw unexpectedly (execution unknown: replayed as 503 `execution_unknown`, never re-run).
 */

/** Longest accepted key (characters, after trimming). */
export const IDEMPOTENCY_KEY_MAX = 128;
/** Rows are kept this long (s). */
export const IDEMPOTENCY_TTL_SEC = 7 * 86_400;
/** A reservation older than this (s) that never finished is reported as execution unknown. */
export const PENDING_STALE_SEC = 600;
/** How long a request waits for an identical request in flight to finish before answering 409 (ms). */
export const PENDING_WAIT_MS = 5_000;

const PENDING = -1;
const UNKNOWN = -2;

const SCHEMA = `
create table if not exists admin_idempotency_keys (
  action text not null,
  idempotency_key text not null,
  request_hash text not null,
  response_status integer not null,
  response_body text,
  created_at bigint not null,
  reservation_owner text not null,
  primary key (action, idempotency_key)
)`;

/** A response as the operator lane sends it (JSON body). */
export interface StoredResponse {
  status: number;
  body: unknown;
}

/**
 * The `Idempotency-Key` of a request: trimmed; absent or blank is null (the action runs normally).
 * @throws HttpError 400 when longer than 128 characters (a key silently ignored would not protect the caller).
 */
export function idempotencyKeyOf(raw: string | undefined): string | null {
  const key = raw?.trim();
  if (!key) return null;
  if (key.length > IDEMPOTENCY_KEY_MAX)
    throw new HttpError(400, `Invalid Idempotency-Key: expected 1 to ${IDEMPOTENCY_KEY_MAX} characters`);
  return key;
}

/**
 * Request fingerprint: `sha256("<METHOD>\n<pathname>\n<sorted query>\n<body>")` (hex). The query is
 * its decoded pairs sorted by name then value and re-encoded, so parameter order does not matter.
 */
export function requestFingerprint(method: string, url: URL, body: string): string {
  const pairs = [...url.searchParams.entries()].sort(([a, x], [b, y]) =>
    a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0,
  );
  const query = new URLSearchParams(pairs).toString();
  return createHash("sha256").update(`${method.toUpperCase()}\n${url.pathname}\n${query}\n${body}`).digest("hex");
}

type Row = {
  request_hash: string;
  response_status: number;
  response_body: string | null;
  created_at: string | number;
  reservation_owner: string;
};

/** What `run` answers: the response and whether it is a replay of a stored one. */
export interface IdempotentOutcome extends StoredResponse {
  replay: boolean;
}

/** Reservations and stored responses of idempotent operator requests, in the state store. */
export class IdempotencyStore {
  private readonly ensureSchema: () => Promise<void>;

  constructor(
    private readonly sql: SqlClient,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.ensureSchema = schemaOnce(sql, SCHEMA);
  }

  private nowSec(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  /**
   * Runs `exec` once per (action, key): reserves, executes, stores the response (status < 500) and
   * answers it; a response ≥ 500 releases the reservation (a retry with the same key runs again);
   * a throw stores "execution unknown" and answers 503. An existing row answers: 409 for a different
   * fingerprint, the stored response (replay) when terminal, 503 `execution_unknown` when unknown or
   * stale, and otherwise waits up to 5 s for the request in flight, then 409 `currently reserved`.
   * @throws HttpError 409/503 as above; 503 `Public API temporarily unavailable` when the store fails.
   */
  async run(
    action: string,
    key: string,
    requestHash: string,
    exec: () => Promise<StoredResponse>,
  ): Promise<IdempotentOutcome> {
    const owner = `admin-idempotency:${action}:${randomUUID()}`;
    const reserved = await this.store(async () => {
      await this.ensureSchema();
      const { rows } = await this.sql.query<{ reservation_owner: string }>(
        `insert into admin_idempotency_keys (action, idempotency_key, request_hash, response_status, response_body, created_at, reservation_owner)
         values ($1, $2, $3, ${PENDING}, null, $4, $5) on conflict (action, idempotency_key) do nothing returning reservation_owner`,
        [action, key, requestHash, this.nowSec(), owner],
      );
      return rows.length > 0;
    });
    if (!reserved) return this.existing(action, key, requestHash);
    let res: StoredResponse;
    try {
      res = await exec();
    } catch (err) {
      apiLog("error", "ops", "idempotent operator action failed unexpectedly; stored as execution unknown", {
        action,
        error: errorMessage(err),
      });
      await this.finish(action, key, owner, UNKNOWN, null).catch(() => undefined);
      throw executionUnknown(false);
    }
    if (res.status >= 500) {
      await this.store(() =>
        this.sql.query(
          "delete from admin_idempotency_keys where action = $1 and idempotency_key = $2 and reservation_owner = $3",
          [action, key, owner],
        ),
      );
      return { ...res, replay: false };
    }
    try {
      await this.finish(action, key, owner, res.status, JSON.stringify(res.body));
    } catch (err) {
      apiLog("error", "ops", "idempotent operator action ran but its response could not be stored", {
        action,
        error: errorMessage(err),
      });
      throw executionUnknown(false);
    }
    await this.prune().catch((err: unknown) =>
      apiLog("warn", "ops", "idempotency prune failed", { error: errorMessage(err) }),
    );
    return { ...res, replay: false };
  }

  /** Deletes rows older than the TTL (7 days); returns how many. */
  async prune(): Promise<number> {
    await this.ensureSchema();
    const { rows } = await this.sql.query("delete from admin_idempotency_keys where created_at < $1 returning action", [
      this.nowSec() - IDEMPOTENCY_TTL_SEC,
    ]);
    return rows.length;
  }

  private async finish(action: string, key: string, owner: string, status: number, body: string | null): Promise<void> {
    const { rows } = await this.sql.query(
      "update admin_idempotency_keys set response_status = $4, response_body = $5 where action = $1 and idempotency_key = $2 and reservation_owner = $3 returning action",
      [action, key, owner, status, body],
    );
    if (rows.length === 0) throw new Error("reservation lost");
  }

  private async existing(action: string, key: string, requestHash: string): Promise<IdempotentOutcome> {
    const deadline = this.nowMs() + PENDING_WAIT_MS;
    for (;;) {
      const row = await this.store(
        async () =>
          (
            await this.sql.query<Row>(
              "select request_hash, response_status, response_body, created_at, reservation_owner from admin_idempotency_keys where action = $1 and idempotency_key = $2",
              [action, key],
            )
          ).rows[0],
      );
      if (!row) {
        // Released (a 5xx) between our insert attempt and this read: run it as a new request would.
        throw new HttpError(409, "Idempotency key is currently reserved", { "Retry-After": "1" });
      }
      if (row.request_hash !== requestHash)
        throw new HttpError(409, "Idempotency key reuse with different request payload");
      const status = Number(row.response_status);
      if (status >= 0)
        return { status, body: row.response_body === null ? null : JSON.parse(row.response_body), replay: true };
      if (status === UNKNOWN || this.nowSec() - Number(row.created_at) > PENDING_STALE_SEC)
        throw executionUnknown(true);
      if (this.nowMs() >= deadline)
        throw new HttpError(409, "Idempotency key is currently reserved", { "Retry-After": "5" });
      await sleep(100);
    }
  }

  private async store<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (err instanceof HttpError) throw err;
      apiLog("warn", "ops", "idempotency bookkeeping failed: state store unavailable", { error: errorMessage(err) });
      throw new HttpError(503, "Public API temporarily unavailable", { "Retry-After": "60" });
    }
  }
}

function executionUnknown(replay: boolean): HttpError {
  return new HttpError(
    503,
    "execution_unknown",
    { "X-Idempotent-Replay": String(replay) },
    {
      message:
        "The outcome of the first request with this Idempotency-Key is unknown; check the job state before retrying with a new key.",
    },
  );
}
