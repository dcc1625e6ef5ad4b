import {
  type DuckDBConnection,
  DuckDBDateValue,
  DuckDBInstance,
  DuckDBTypeId,
  type DuckDBValue,
  JsonDuckDBValueConverter,
} from "@duckdb/node-api";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ColumnType } from "../pipelines/sources/column-type.ts";

/** Distinct values of one text column Db.all shares before it stops (a column of ids or sources, not of JSON documents). */
const INTERNED_PER_COLUMN = 4096;

/** A DuckDB database and one connection; SQL values are always bound, never interpolated. */
export class Db {
  private constructor(
    readonly instance: DuckDBInstance,
    readonly conn: DuckDBConnection,
    /** False for a connection opened by `connect`: closing it leaves the database open. */
    private readonly ownsInstance = true,
    /** The in-memory database's own spill folder (see `open`), removed by `close`. */
    private readonly spillDir?: string,
  ) {}

  /**
   * Another connection to this database (own transactions, same tables), e.g. to run a query while
   * this connection runs another. Its `close` closes only the connection; close it before the database.
   */
  async connect(): Promise<Db> {
    return new Db(this.instance, await this.instance.connect(), false);
  }

  /**
   * Opens (or creates) a database file; `:memory:` for an in-memory one. An in-memory database given no
   * `temp_directory` spills to a folder of its own under the OS temp dir (created by DuckDB only when it
   * spills, removed by `close`): DuckDB's default, `.tmp/` in the cwd, is one file name for every process
   * there, and two processes spilling at once broke each other's reads (`Could not read enough bytes`).
   */
  static async open(path = ":memory:", options: Record<string, string> = {}): Promise<Db> {
    const spillDir =
      path === ":memory:" && options.temp_directory === undefined
        ? join(tmpdir(), `ballast-duckdb-spill-${process.pid}-${randomUUID()}`)
        : undefined;
    const instance = await DuckDBInstance.create(path, {
      threads: "2",
      ...(spillDir ? { temp_directory: spillDir } : {}),
      ...options,
    });
    return new Db(instance, await instance.connect(), true, spillDir);
  }

  async exec(sql: string, values?: Record<string, DuckDBValue>): Promise<void> {
    await this.conn.run(sql, values);
  }

  /**
   * Runs a query and returns rows as JSON values (big integers and decimals as strings), converted as
   * `getRowObjectsJson` converts them (the library's JSON converter, value by value), but streamed one
   * chunk at a time and column by column; a text column's repeated values share one string (up to
   * INTERNED_PER_COLUMN distinct values, e.g. coin ids and sources), which keeps large inputs small.
   */
  async all<T = Record<string, unknown>>(sql: string, values?: Record<string, DuckDBValue>): Promise<T[]> {
    const result = await this.conn.stream(sql, values);
    const names = result.deduplicatedColumnNames();
    const pools: (Map<string, string> | null)[] = names.map(() => new Map());
    const rows: Record<string, unknown>[] = [];
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const first = rows.length;
      for (let r = 0; r < chunk.rowCount; r++) rows.push({});
      names.forEach((name, c) => {
        const vector = chunk.getColumnVector(c);
        const type = vector.type;
        let pool = type.typeId === DuckDBTypeId.VARCHAR ? pools[c] : null;
        for (let r = 0; r < vector.itemCount; r++) {
          let v = JsonDuckDBValueConverter(vector.getItem(r), type, JsonDuckDBValueConverter);
          if (pool && typeof v === "string") {
            const shared = pool.get(v);
            if (shared !== undefined) v = shared;
            else if (pool.size < INTERNED_PER_COLUMN) pool.set(v, v);
            else {
              pool = null;
              pools[c] = null;
            }
          }
          rows[first + r][name] = v;
        }
      });
    }
    return rows as T[];
  }

  /** Creates `table` (replacing it) with `columns` (name → type, in order). */
  async createTable(table: string, columns: Record<string, ColumnType>): Promise<void> {
    const cols = Object.entries(columns).map(([c, t]) => `"${c}" ${t}`);
    await this.exec(`create or replace table ${table} (${cols.join(", ")})`);
  }

  /** Creates `table` (replacing it, unless `append`) and appends rows with the given column types (openAppender). */
  async loadRows(
    table: string,
    columns: Record<string, ColumnType>,
    rows: Iterable<Record<string, unknown>>,
    append = false,
  ): Promise<void> {
    if (!append) await this.createTable(table, columns);
    const appender = await this.openAppender(table, columns);
    for (const row of rows) appender.append(row);
    appender.close();
  }

  /**
   * A DuckDB appender on `table`, whose columns are `columns` (name → type, in table order). Each
   * appended row's values are converted to their column's type (null/undefined → NULL; DATE from
   * `YYYY-MM-DD…`); rows are not copied, and are in the table once `close` returns.
   */
  async openAppender(table: string, columns: Record<string, ColumnType>): Promise<RowAppender> {
    const appender = await this.conn.createAppender(table);
    const cols = Object.entries(columns);
    return {
      append(row) {
        for (const [c, t] of cols) {
          const v = row[c];
          if (v === null || v === undefined) {
            appender.appendNull();
            continue;
          }
          switch (t) {
            case "VARCHAR":
              appender.appendVarchar(String(v));
              break;
            case "DOUBLE":
              appender.appendDouble(Number(v));
              break;
            case "BIGINT":
              appender.appendBigInt(BigInt(v as number));
              break;
            case "HUGEINT":
              appender.appendHugeInt(BigInt(v as string));
              break;
            case "BOOLEAN":
              appender.appendBoolean(Boolean(v));
              break;
            case "DATE":
              appender.appendDate(
                new DuckDBDateValue(Math.round(Date.parse(`${String(v).slice(0, 10)}T00:00:00Z`) / 86_400_000)),
              );
              break;
          }
        }
        appender.endRow();
      },
      close() {
        appender.flushSync();
        appender.closeSync();
      },
    };
  }

  close(): void {
    this.conn.closeSync();
    if (!this.ownsInstance) return;
    this.instance.closeSync();
    if (this.spillDir) rmSync(this.spillDir, { recursive: true, force: true });
  }
}

/** Appends rows to one table synchronously (Db.openAppender). */
export interface RowAppender {
  /** Appends one row (column name → value). */
  append(row: Record<string, unknown>): void;
  /** Flushes the appended rows into the table and closes the appender. */
  close(): void;
}
