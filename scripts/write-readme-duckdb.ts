import { readFileSync, writeFileSync } from "node:fs";
import { withReadmeTableList } from "../datasets/table-docs.ts";

// Regenerates the table list of docs/duckdb.md ("Query the published DuckDB file", linked from the README) from
// datasets/table-docs.ts (test/e2e/duckdb-docs.test.ts fails on drift).
const path = new URL("../docs/duckdb.md", import.meta.url);
writeFileSync(path, withReadmeTableList(readFileSync(path, "utf8")));
process.stdout.write("wrote docs/duckdb.md duckdb table list\n");
