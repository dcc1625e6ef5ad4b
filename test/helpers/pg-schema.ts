import pg from "pg";

/** The shared test Postgres (trust auth, database `test`). */
export const PG_URL = "postgres://postgres@127.0.0.1:5432/test";

/**
 * A fresh schema on the shared Postgres for one test file: `url` selects it through `search_path`,
 * `drop()` removes it with everything in it. Tests never touch other schemas.
 */
export async function createTestSchema(prefix: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  await adminQuery(`create schema ${name}`);
  return {
    name,
    url: `${PG_URL}?options=-csearch_path%3D${name}`,
    drop: () => adminQuery(`drop schema if exists ${name} cascade`),
  };
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}
