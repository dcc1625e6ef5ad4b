import { DuckDBInstance } from "@duckdb/node-api";
const [db, ...qs] = process.argv.slice(2);
const inst = await DuckDBInstance.create(db, { access_mode: "READ_ONLY" });
const c = await inst.connect();
for (const q of qs) { const r = await c.runAndReadAll(q); console.table(r.getRowObjectsJson()); }
