import { readFileSync, writeFileSync } from "node:fs";
import { withReadmeTableList } from "../build/table-docs.ts";

// Regenerates the table list of README "Query the published DuckDB file" from build/table-docs.ts (a test fails on drift).
const path = new URL("../README.md", import.meta.url);
writeFileSync(path, withReadmeTableList(readFileSync(path, "utf8")));
process.stdout.write("wrote README.md duckdb table list\n");
