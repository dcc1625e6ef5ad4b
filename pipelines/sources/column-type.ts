// Declared apart from the source contract (types.ts, which names the HTTP and RPC clients) so that row
// contracts (analytics, on-chain events) name column types without importing the clients. Imports nothing.

/**
 * Column types a table may be loaded with, the ones the loader knows how to append into DuckDB; DATE
 * values are `YYYY-MM-DD` strings (UTC days).
 */
export type ColumnType = "VARCHAR" | "DOUBLE" | "BIGINT" | "HUGEINT" | "BOOLEAN" | "DATE";
