import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from "@duckdb/node-api";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PublishedStore } from "./published.ts";

/**
 * Read-only DuckDB over the serving build's `ballast.duckdb` (the query routes: depeg-events,
 * events). The file is copied once per build to a local temp path (the store may be S3) and opened
 * with `access_mode=READ_ONLY`; a new build swaps the handle. `all` returns null when the build has
 * no database (routes answer 503); SQL values are always bound.
 */
export class PublishedDb {
  private current: { buildId: string; instance: DuckDBInstance; conn: DuckDBConnection; path: string } | null = null;
  private opening: Promise<unknown> | null = null;

  constructor(private readonly store: PublishedStore, private readonly dir = join(tmpdir(), "ballast-api-db")) {}

  private async connection(): Promise<DuckDBConnection | null> {
    const build = await this.store.build();
    if (!build) return null;
    const buildId = build.manifest.buildId;
    if (this.current?.buildId === buildId) return this.current.conn;
    if (this.opening) { await this.opening; return this.connection(); }
    const open = (async () => {
      const bytes = await this.store.file("ballast.duckdb");
      if (!bytes) return null;
      mkdirSync(this.dir, { recursive: true });
      const path = join(this.dir, `${buildId}-${process.pid}.duckdb`);
      if (!existsSync(path)) writeFileSync(path, bytes);
      const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY", threads: "1" });
      const conn = await instance.connect();
      const old = this.current;
      this.current = { buildId, instance, conn, path };
      if (old) { old.conn.closeSync(); old.instance.closeSync(); await rm(old.path, { force: true }); }
      return conn;
    })();
    this.opening = open;
    try {
      return await open;
    } finally {
      this.opening = null;
    }
  }

  /** Rows of a read-only query as JSON values (BIGINT as strings), or null when no database is published. */
  async all<T = Record<string, unknown>>(sql: string, values?: Record<string, DuckDBValue>): Promise<T[] | null> {
    const conn = await this.connection();
    if (!conn) return null;
    const reader = await conn.runAndReadAll(sql, values);
    return reader.getRowObjectsJson() as T[];
  }

  /** Closes the handle and removes the temp copy. */
  async close(): Promise<void> {
    if (!this.current) return;
    this.current.conn.closeSync();
    this.current.instance.closeSync();
    await rm(this.current.path, { force: true });
    this.current = null;
  }
}
