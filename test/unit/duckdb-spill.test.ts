import { existsSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Db } from "../../build/duckdb.ts";

// Two processes' in-memory databases in one cwd spilled to the same `.tmp/duckdb_temp_storage_DEFAULT-0.tmp`
// (DuckDB's default) and broke each other's reads in the suite ("Could not read enough bytes"): each
// in-memory database now spills to a folder of its own, removed when it closes.

const tempDirectory = async (db: Db) =>
  String((await db.all<{ d: string }>("SELECT current_setting('temp_directory') AS d"))[0]?.d);

describe("Db.open spill folder", () => {
  it("gives each in-memory database its own spill folder, not the cwd's .tmp", async () => {
    const a = await Db.open();
    const b = await Db.open();
    try {
      const [da, db] = [await tempDirectory(a), await tempDirectory(b)];
      expect(da).not.toBe(db);
      for (const d of [da, db]) expect(d).toMatch(/ballast-duckdb-spill-/);
    } finally {
      a.close();
      b.close();
    }
  });

  it("spills there under a small memory limit and removes the folder on close", async () => {
    const db = await Db.open(":memory:", { threads: "1", memory_limit: "32MB" });
    const dir = await tempDirectory(db);
    try {
      await db.exec("CREATE TABLE t AS SELECT range AS i, md5(range::VARCHAR) AS s FROM range(2000000)");
      await db.exec("CREATE TABLE sorted AS SELECT * FROM t ORDER BY s");
      expect(existsSync(dir) && readdirSync(dir).length > 0).toBe(true);
    } finally {
      db.close();
    }
    expect(existsSync(dir)).toBe(false);
  });

  it("keeps a temp_directory the caller gives", async () => {
    const db = await Db.open(":memory:", { temp_directory: "/tmp/ballast-given-spill" });
    try {
      expect(await tempDirectory(db)).toBe("/tmp/ballast-given-spill");
    } finally {
      db.close();
    }
  });
});
