import { type DuckDBConnection, DuckDBDateValue, DuckDBInstance, type DuckDBValue } from "@duckdb/node-api";
import type { ColumnType } from "../pipelines/sources/types.ts";

/** A DuckDB database and one connection; SQL values are always bound, never interpolated. */
export class Db {
  private constructor(
    readonly instance: DuckDBInstance,
    readonly conn: DuckDBConnection,
  ) {}

  /** Opens (or creates) a database file; `:memory:` for an in-memory one. */
  static async open(path = ":memory:", options: Record<string, string> = {}): Promise<Db> {
    const instance = await DuckDBInstance.create(path, { threads: "2", ...options });
    return new Db(instance, await instance.connect());
  }

  async exec(sql: string, values?: Record<string, DuckDBValue>): Promise<void> {
    await this.conn.run(sql, values);
  }

  /** Runs a query and returns rows as JSON values (big integers and decimals as strings). */
  async all<T = Record<string, unknown>>(sql: string, values?: Record<string, DuckDBValue>): Promise<T[]> {
    const reader = await this.conn.runAndReadAll(sql, values);
    return reader.getRowObjectsJson() as T[];
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
    this.instance.closeSync();
  }
}

/** Appends rows to one table synchronously (Db.openAppender). */
export interface RowAppender {
  /** Appends one row (column name → value). */
  append(row: Record<string, unknown>): void;
  /** Flushes the appended rows into the table and closes the appender. */
  close(): void;
}
