import type { SqlClient } from "./key-store.ts";

/**
 * Runs `create table if not exists …` DDL, retried once: two processes creating the same table at the
 * same moment make one of them fail on Postgres (a duplicate catalog row), after which the table exists.
 * @throws the second failure (the state store is unreachable).
 */
export async function ensureTable(sql: SqlClient, ddl: string): Promise<void> {
  try {
    await sql.query(ddl);
  } catch {
    await sql.query(ddl);
  }
}

/**
 * A memoised schema step: the first call runs `ensureTable`, later calls share it; a failure is not
 * kept (the next call tries again).
 */
export function schemaOnce(sql: SqlClient, ddl: string): () => Promise<void> {
  let ready: Promise<void> | null = null;
  return () =>
    (ready ??= ensureTable(sql, ddl).catch((err: unknown) => {
      ready = null;
      throw err;
    }));
}
