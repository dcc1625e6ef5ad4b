import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from "@duckdb/node-api";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServingBuild } from "./published.ts";

/**
 * Read-only DuckDB over the serving build's `ballast.duckdb` (the query routes: depeg-events,
 * events). The file is copied once per build to a local temp path (the store may be S3) and opened
 * with `access_mode=READ_ONLY`; a newer build swaps the handle. Queries name the build the request
 * resolved, so rows never come from another build. `all` returns null when the build has no
 * database (routes answer 503); SQL values are always bound.
 */
export class PublishedDb {
  /** Open handles by build id, oldest first: the serving build and the one before it (in-flight requests). */
  private readonly handles = new Map<string, Promise<Handle | null>>();

  constructor(private readonly dir = join(tmpdir(), "ballast-api-db"), private readonly keep = 2) {}

  private connection(build: ServingBuild): Promise<Handle | null> {
    let h = this.handles.get(build.id);
    if (!h) {
      h = this.open(build);
      this.handles.set(build.id, h);
      h.catch(() => this.handles.delete(build.id));
      while (this.handles.size > this.keep) {
        const [oldest, old] = this.handles.entries().next().value!;
        this.handles.delete(oldest);
        void old.then((o) => o && closeHandle(o), () => undefined);
      }
    }
    return h;
  }

  private async open(build: ServingBuild): Promise<Handle | null> {
    const bytes = await build.file("ballast.duckdb");
    if (!bytes) return null;
    mkdirSync(this.dir, { recursive: true });
    const path = join(this.dir, `${build.id}-${process.pid}.duckdb`);
    if (!existsSync(path)) writeFileSync(path, bytes);
    // A bounded buffer pool: the query routes read a ~10 MB file; the default (80% of RAM) would let
    // many distinct queries grow the server without limit.
    const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY", threads: "1", memory_limit: "64MB" });
    return { instance, conn: await instance.connect(), path };
  }

  /** Rows of a read-only query over `build`'s database as JSON values (BIGINT as strings), or null when it has none. */
  async all<T = Record<string, unknown>>(build: ServingBuild, sql: string, values?: Record<string, DuckDBValue>): Promise<T[] | null> {
    const h = await this.connection(build);
    if (!h) return null;
    const reader = await h.conn.runAndReadAll(sql, values);
    return reader.getRowObjectsJson() as T[];
  }

  /** Closes every handle and removes the temp copies. */
  async close(): Promise<void> {
    const all = [...this.handles.values()];
    this.handles.clear();
    for (const h of all) {
      const o = await h.catch(() => null);
      if (o) await closeHandle(o);
    }
  }
}

interface Handle { instance: DuckDBInstance; conn: DuckDBConnection; path: string }

async function closeHandle(h: Handle): Promise<void> {
  h.conn.closeSync();
  h.instance.closeSync();
  await rm(h.path, { force: true });
}
