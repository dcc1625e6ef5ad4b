import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from "@duckdb/node-api";
import pLimit from "p-limit";
import { EVENT_KINDS, ONCHAIN_EVENT_COLUMNS, type OnchainEventRow, OnchainEventRowSchema } from "./contract.ts";

/**
 * The durable on-chain ledger: one DuckDB file written by the ingestion jobs and read (read-only) by
 * the build as the source of live on-chain rows.
 *
 * Tables (the contract with the build):
 * - `onchain_events`: exactly the columns of ONCHAIN_EVENT_COLUMNS with their types, primary key `id`.
 * - `onchain_cursors(config_key varchar primary key, last_block bigint, last_block_hash varchar,
 *   updated_at bigint)`: last block fully read per config (EVM: block number; Tron: block timestamp
 *   in ms), the block's hash when known, and when the cursor moved (Unix s).
 * - `onchain_unknown_topics(config_key, topic0, count; primary key (config_key, topic0))`: logs whose
 *   topic0 the config's family does not declare, counted per observation (a re-read range after a
 *   rollback or reset counts again).
 * - `onchain_provider_state(provider primary key, state, consecutive_failures, last_success_at)`:
 *   last saved circuit state of each RPC provider (`{chain}#{i}:{host}`; last_success_at Unix s).
 * - `onchain_amount_attempts(id primary key, attempts, last_error, last_attempt_at)`: failed balance
 *   reads per event row (remediation stops retrying a row after `maxAttempts`).
 * - `onchain_current_balances(config_key, address, balance_raw, block_number, observed_at; primary key
 *   (config_key, address))`: last successful current-balance snapshot of each blacklisted address
 *   (base units as digits; block read; Unix s), kept after unblacklist.
 *
 * Atomicity: a block range is ONE transaction (its rows, its unknown-topic counts and the cursor move
 * together), so a process killed at any point resumes from the last committed cursor with neither gaps
 * nor duplicates (ids are primary keys; re-inserting an id replaces the row, keeping an already
 * resolved amount when the new read did not resolve it). Statements are queued on the one connection (a read never runs inside another caller's open transaction).
 * Open, work, `close()`: the build opens the same file read-only afterwards and DuckDB allows one
 * writing process at a time.
 */

/** File name of the ledger under the data dir. */
export const ONCHAIN_LEDGER_FILE = "onchain.duckdb";

/** Ledger path for an env: `<BALLAST_DATA_DIR or ./data>/onchain.duckdb` (absolute). */
export function defaultLedgerPath(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.BALLAST_DATA_DIR ?? "./data", ONCHAIN_LEDGER_FILE);
}

/** `<BALLAST_DATA_DIR or ./data>/onchain.duckdb`, resolved when this module loads. */
export const DEFAULT_LEDGER_PATH = defaultLedgerPath();

/** The sync cursor of one config. */
export interface LedgerCursor {
  configKey: string;
  /** Last block fully read (EVM block number; Tron: block timestamp, ms). */
  lastBlock: number;
  /** Lowercase hash of that block when known (null on Tron or after a reset). */
  lastBlockHash: string | null;
  /** Unix s of the last cursor move. */
  updatedAt: number;
}

/** What one committed block range writes (one transaction). */
export interface RangeCommit {
  configKey: string;
  rows: OnchainEventRow[];
  /** New cursor (the range's last block and its hash); omitted for backfills that must not move the cursor. */
  cursor?: { lastBlock: number; lastBlockHash: string | null };
  /** Unknown-topic observations of the range, by topic0. */
  unknownTopics?: Map<string, number>;
  /**
   * When set, this config's rows with block_number in [fromBlock, toBlock] are deleted first, so the
   * range ends up exactly as read (backfill re-reads).
   */
  replaceBlocks?: { fromBlock: number; toBlock: number };
  /** Unix s stamped on the cursor. */
  nowSec: number;
}

/** New amount of one event row (after a balance read). */
export interface AmountUpdate {
  id: string;
  amount_raw: string | null;
  amount_source: OnchainEventRow["amount_source"];
  amount_status: OnchainEventRow["amount_status"];
}

/** Filters of `events()`; every given filter must match. */
export interface EventFilter {
  configKeys?: string[];
  chainId?: string;
  stablecoinId?: string;
  kinds?: OnchainEventRow["kind"][];
  amountStatuses?: OnchainEventRow["amount_status"][];
  amountSources?: OnchainEventRow["amount_source"][];
  /** Only rows with fewer failed balance reads than this (onchain_amount_attempts). */
  maxAttemptsBelow?: number;
  limit?: number;
}

/** Saved circuit state of one provider. */
export interface StoredProviderState {
  provider: string;
  state: string;
  consecutiveFailures: number;
  lastSuccessAt: number | null;
}

/** One current-balance snapshot. */
export interface CurrentBalance {
  configKey: string;
  address: string;
  balanceRaw: string;
  blockNumber: number;
  observedAt: number;
}

const COLS = Object.keys(ONCHAIN_EVENT_COLUMNS) as (keyof OnchainEventRow)[];
const JSON_STRUCT = JSON.stringify(Object.fromEntries(COLS.map((c) => [c, ONCHAIN_EVENT_COLUMNS[c]])));
const DDL = [
  `create table if not exists onchain_events (${COLS.map((c) => `"${c}" ${ONCHAIN_EVENT_COLUMNS[c]}${c === "id" ? " primary key" : ""}`).join(", ")})`,
  "create table if not exists onchain_cursors (config_key varchar primary key, last_block bigint not null, last_block_hash varchar, updated_at bigint not null)",
  "create table if not exists onchain_unknown_topics (config_key varchar not null, topic0 varchar not null, count bigint not null, primary key (config_key, topic0))",
  "create table if not exists onchain_provider_state (provider varchar primary key, state varchar not null, consecutive_failures bigint not null, last_success_at bigint)",
  "create table if not exists onchain_amount_attempts (id varchar primary key, attempts bigint not null, last_error varchar, last_attempt_at bigint not null)",
  "create table if not exists onchain_current_balances (config_key varchar not null, address varchar not null, balance_raw varchar not null, block_number bigint not null, observed_at bigint not null, primary key (config_key, address))",
];
const KEEP_RESOLVED = (c: string) =>
  `${c} = case when excluded.amount_status = 'resolved' or onchain_events.amount_status <> 'resolved' then excluded.${c} else onchain_events.${c} end`;
const UPSERT_EVENTS = `insert into onchain_events select * from (select unnest(from_json($rows::json, '[${JSON_STRUCT}]'), recursive := true))
  on conflict (id) do update set ${COLS.filter((c) => c !== "id")
    .map((c) =>
      c === "amount_raw" || c === "amount_source" || c === "amount_status"
        ? KEEP_RESOLVED(c)
        : `"${c}" = excluded."${c}"`,
    )
    .join(", ")}`;

/** Converts a row read back from DuckDB (BIGINTs as strings) into a validated OnchainEventRow. */
function toRow(r: Record<string, unknown>): OnchainEventRow {
  const num = (v: unknown) => (v === null || v === undefined ? v : Number(v));
  return OnchainEventRowSchema.parse({
    ...r,
    decimals: num(r.decimals),
    block_number: num(r.block_number),
    log_index: num(r.log_index),
    ts: num(r.ts),
  });
}

/** The ledger file (see module doc). */
export class LedgerStore {
  /** Every statement on the one connection goes through this queue (no interleaving with an open transaction). */
  private readonly queue = pLimit(1);
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    readonly readOnly: boolean,
  ) {}

  /**
   * Opens (creating the file, its directory and the tables when missing) the ledger at `path`.
   * `readOnly` opens without creating anything (the file must exist). Throws DuckDB's error when
   * another process holds the file for writing.
   */
  static async open(path: string, opts: { readOnly?: boolean } = {}): Promise<LedgerStore> {
    const readOnly = opts.readOnly ?? false;
    if (!readOnly && path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
    const instance = await DuckDBInstance.create(path, {
      threads: "2",
      ...(readOnly ? { access_mode: "READ_ONLY" } : {}),
    });
    const conn = await instance.connect();
    const store = new LedgerStore(path, instance, conn, readOnly);
    if (!readOnly) for (const sql of DDL) await conn.run(sql);
    return store;
  }

  /** Runs a query NOW (callers hold the queue: inside `tx` or `read`). */
  private async raw<T = Record<string, unknown>>(sql: string, values?: Record<string, DuckDBValue>): Promise<T[]> {
    const reader = await this.conn.runAndReadAll(sql, values);
    return reader.getRowObjectsJson() as T[];
  }

  /** A read query, queued behind pending writes. */
  private all<T = Record<string, unknown>>(sql: string, values?: Record<string, DuckDBValue>): Promise<T[]> {
    return this.queue(() => this.raw<T>(sql, values));
  }

  /** Runs `fn` inside one transaction (serialised with every other write); rolls back and rethrows on error. */
  private tx<T>(fn: () => Promise<T>): Promise<T> {
    if (this.readOnly) throw new Error("ledger opened read-only");
    return this.queue(async () => {
      await this.conn.run("begin transaction");
      try {
        const out = await fn();
        await this.conn.run("commit");
        return out;
      } catch (err) {
        await this.conn.run("rollback").catch(() => {});
        throw err;
      }
    });
  }

  private async upsertRows(rows: OnchainEventRow[]): Promise<void> {
    if (rows.length === 0) return;
    const seen = new Set<string>();
    for (const r of rows) {
      if (seen.has(r.id)) throw new Error(`duplicate event id in one commit: ${r.id}`);
      seen.add(r.id);
    }
    for (let i = 0; i < rows.length; i += 20_000)
      await this.conn.run(UPSERT_EVENTS, { rows: JSON.stringify(rows.slice(i, i + 20_000)) });
  }

  /**
   * Commits one block range in ONE transaction: (optionally) clears the replaced blocks, upserts the
   * rows (validated against OnchainEventRowSchema; an already resolved amount survives a re-read that
   * did not resolve it), adds unknown-topic counts and moves the cursor. Throws (and writes nothing)
   * on an invalid or duplicate row or a DuckDB error.
   */
  async commitRange(c: RangeCommit): Promise<void> {
    const rows = c.rows.map((r) => OnchainEventRowSchema.parse(r));
    for (const r of rows)
      if (r.config_key !== c.configKey) throw new Error(`row ${r.id} belongs to ${r.config_key}, not ${c.configKey}`);
    await this.tx(async () => {
      if (c.replaceBlocks) {
        await this.conn.run("delete from onchain_events where config_key = $k and block_number between $f and $t", {
          k: c.configKey,
          f: BigInt(c.replaceBlocks.fromBlock),
          t: BigInt(c.replaceBlocks.toBlock),
        });
      }
      await this.upsertRows(rows);
      for (const [topic0, n] of c.unknownTopics ?? []) {
        await this.conn.run(
          "insert into onchain_unknown_topics values ($k, $t, $n) on conflict (config_key, topic0) do update set count = onchain_unknown_topics.count + excluded.count",
          { k: c.configKey, t: topic0, n: BigInt(n) },
        );
      }
      if (c.cursor) await this.putCursor(c.configKey, c.cursor.lastBlock, c.cursor.lastBlockHash, c.nowSec);
    });
  }

  private async putCursor(configKey: string, lastBlock: number, hash: string | null, nowSec: number): Promise<void> {
    await this.conn.run("insert or replace into onchain_cursors values ($k, $b, $h, $u)", {
      k: configKey,
      b: BigInt(lastBlock),
      h: hash,
      u: BigInt(nowSec),
    });
  }

  /**
   * Reorg rollback in ONE transaction: deletes `configKey`'s rows with block_number > `toBlock` and
   * sets its cursor to `toBlock` (hash `hash`), or removes the cursor when `toBlock` < 0 (the next sync
   * starts at the config's start block). Returns the number of rows deleted.
   */
  async rollback(configKey: string, toBlock: number, hash: string | null, nowSec: number): Promise<number> {
    return this.tx(async () => {
      const [{ n }] = await this.raw<{ n: string }>(
        "select count(*) as n from onchain_events where config_key = $k and block_number > $b",
        { k: configKey, b: BigInt(toBlock) },
      );
      await this.conn.run("delete from onchain_events where config_key = $k and block_number > $b", {
        k: configKey,
        b: BigInt(toBlock),
      });
      if (toBlock < 0) await this.conn.run("delete from onchain_cursors where config_key = $k", { k: configKey });
      else await this.putCursor(configKey, toBlock, hash, nowSec);
      return Number(n);
    });
  }

  /** Cursor of `configKey`, or null when the config was never synced. */
  async getCursor(configKey: string): Promise<LedgerCursor | null> {
    const [r] = await this.all<{ last_block: string; last_block_hash: string | null; updated_at: string }>(
      "select last_block, last_block_hash, updated_at from onchain_cursors where config_key = $k",
      { k: configKey },
    );
    return r
      ? {
          configKey,
          lastBlock: Number(r.last_block),
          lastBlockHash: r.last_block_hash,
          updatedAt: Number(r.updated_at),
        }
      : null;
  }

  /** Every cursor, sorted by config key. */
  async cursors(): Promise<LedgerCursor[]> {
    const rows = await this.all<{
      config_key: string;
      last_block: string;
      last_block_hash: string | null;
      updated_at: string;
    }>("select * from onchain_cursors order by config_key");
    return rows.map((r) => ({
      configKey: r.config_key,
      lastBlock: Number(r.last_block),
      lastBlockHash: r.last_block_hash,
      updatedAt: Number(r.updated_at),
    }));
  }

  /**
   * Moves cursors in ONE transaction without touching rows (admin reset): `lastBlock` < 0 deletes the
   * cursor (next sync starts at the config's start block). Returns the number of cursors changed.
   */
  async setCursors(
    updates: { configKey: string; lastBlock: number; lastBlockHash: string | null }[],
    nowSec: number,
  ): Promise<number> {
    if (updates.length === 0) return 0;
    return this.tx(async () => {
      for (const u of updates) {
        if (u.lastBlock < 0)
          await this.conn.run("delete from onchain_cursors where config_key = $k", { k: u.configKey });
        else await this.putCursor(u.configKey, u.lastBlock, u.lastBlockHash, nowSec);
      }
      return updates.length;
    });
  }

  /** Event rows matching `filter`, ordered by (ts, block_number, log_index, id). */
  async events(filter: EventFilter = {}): Promise<OnchainEventRow[]> {
    const where: string[] = [];
    const v: Record<string, DuckDBValue> = {};
    const inList = (col: string, name: string, values: string[]) => {
      where.push(`${col} in (select unnest(from_json($${name}::json, '["VARCHAR"]')))`);
      v[name] = JSON.stringify(values);
    };
    if (filter.configKeys) inList("e.config_key", "keys", filter.configKeys);
    if (filter.chainId) {
      where.push("e.chain_id = $chain");
      v.chain = filter.chainId;
    }
    if (filter.stablecoinId) {
      where.push("e.stablecoin_id = $coin");
      v.coin = filter.stablecoinId;
    }
    if (filter.kinds)
      inList(
        "e.kind",
        "kinds",
        filter.kinds.filter((k) => (EVENT_KINDS as readonly string[]).includes(k)),
      );
    if (filter.amountStatuses) inList("e.amount_status", "statuses", filter.amountStatuses);
    if (filter.amountSources) inList("e.amount_source", "sources", filter.amountSources);
    if (filter.maxAttemptsBelow !== undefined) {
      where.push("coalesce(a.attempts, 0) < $maxa");
      v.maxa = BigInt(filter.maxAttemptsBelow);
    }
    if (filter.limit !== undefined) v.lim = BigInt(filter.limit);
    const rows = await this.all(
      `select e.* from onchain_events e left join onchain_amount_attempts a on a.id = e.id
       ${where.length ? `where ${where.join(" and ")}` : ""} order by e.ts, e.block_number, e.log_index, e.id${filter.limit !== undefined ? " limit $lim" : ""}`,
      v,
    );
    return rows.map(toRow);
  }

  /** Number of event rows (optionally of one config). */
  async countEvents(configKey?: string): Promise<number> {
    const [r] = await this.all<{ n: string }>(
      `select count(*) as n from onchain_events${configKey ? " where config_key = $k" : ""}`,
      configKey ? { k: configKey } : undefined,
    );
    return Number(r.n);
  }

  /**
   * Applies amount updates and failed-read bookkeeping in ONE transaction: `updates` set amount
   * columns; each id in `failed` gets attempts + 1 with its error; a resolved id's attempts row is removed.
   */
  async updateAmounts(updates: AmountUpdate[], failed: { id: string; error: string }[], nowSec: number): Promise<void> {
    if (updates.length === 0 && failed.length === 0) return;
    await this.tx(async () => {
      for (const u of updates) {
        await this.conn.run(
          "update onchain_events set amount_raw = $a, amount_source = $s, amount_status = $st where id = $id",
          { a: u.amount_raw, s: u.amount_source, st: u.amount_status, id: u.id },
        );
        if (u.amount_status === "resolved")
          await this.conn.run("delete from onchain_amount_attempts where id = $id", { id: u.id });
      }
      for (const f of failed) {
        await this.conn.run(
          `insert into onchain_amount_attempts values ($id, 1, $e, $t)
          on conflict (id) do update set attempts = onchain_amount_attempts.attempts + 1, last_error = excluded.last_error, last_attempt_at = excluded.last_attempt_at`,
          { id: f.id, e: f.error.slice(0, 500), t: BigInt(nowSec) },
        );
      }
    });
  }

  /** Failed balance-read attempts per id (ids without failures are absent). */
  async amountAttempts(): Promise<Map<string, number>> {
    const rows = await this.all<{ id: string; attempts: string }>(
      "select id, attempts from onchain_amount_attempts order by id",
    );
    return new Map(rows.map((r) => [r.id, Number(r.attempts)]));
  }

  /** Unknown-topic counts, sorted by (config_key, topic0). */
  async unknownTopics(): Promise<{ config_key: string; topic0: string; count: number }[]> {
    const rows = await this.all<{ config_key: string; topic0: string; count: string }>(
      "select * from onchain_unknown_topics order by config_key, topic0",
    );
    return rows.map((r) => ({ ...r, count: Number(r.count) }));
  }

  /** Saves provider circuit states (replacing each provider's previous row) in one transaction. */
  async saveProviderStates(states: StoredProviderState[]): Promise<void> {
    if (states.length === 0) return;
    await this.tx(async () => {
      for (const s of states) {
        await this.conn.run("insert or replace into onchain_provider_state values ($p, $s, $f, $l)", {
          p: s.provider,
          s: s.state,
          f: BigInt(s.consecutiveFailures),
          l: s.lastSuccessAt === null ? null : BigInt(s.lastSuccessAt),
        });
      }
    });
  }

  /** Saved provider states, sorted by provider. */
  async providerStates(): Promise<StoredProviderState[]> {
    const rows = await this.all<{
      provider: string;
      state: string;
      consecutive_failures: string;
      last_success_at: string | null;
    }>("select * from onchain_provider_state order by provider");
    return rows.map((r) => ({
      provider: r.provider,
      state: r.state,
      consecutiveFailures: Number(r.consecutive_failures),
      lastSuccessAt: r.last_success_at === null ? null : Number(r.last_success_at),
    }));
  }

  /** Upserts current-balance snapshots in one transaction. */
  async upsertCurrentBalances(rows: CurrentBalance[]): Promise<void> {
    if (rows.length === 0) return;
    await this.tx(async () => {
      for (const r of rows) {
        await this.conn.run("insert or replace into onchain_current_balances values ($k, $a, $b, $n, $o)", {
          k: r.configKey,
          a: r.address,
          b: r.balanceRaw,
          n: BigInt(r.blockNumber),
          o: BigInt(r.observedAt),
        });
      }
    });
  }

  /** Current-balance snapshots (optionally of some configs), sorted by (config_key, address). */
  async currentBalances(configKeys?: string[]): Promise<CurrentBalance[]> {
    const rows = await this.all<{
      config_key: string;
      address: string;
      balance_raw: string;
      block_number: string;
      observed_at: string;
    }>(
      `select * from onchain_current_balances${configKeys ? " where config_key in (select unnest(from_json($k::json, '[\"VARCHAR\"]')))" : ""} order by config_key, address`,
      configKeys ? { k: JSON.stringify(configKeys) } : undefined,
    );
    return rows.map((r) => ({
      configKey: r.config_key,
      address: r.address,
      balanceRaw: r.balance_raw,
      blockNumber: Number(r.block_number),
      observedAt: Number(r.observed_at),
    }));
  }

  /** Waits for pending writes, then closes the connection and the database (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue(async () => {});
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
