import type { ColumnType } from "../sources/column-type.ts";

/** A row read from or written to the warehouse: column name → JSON value. */
export type Row = Record<string, unknown>;

/**
 * A `registry_coins` row as build/stages/load.ts writes it (the curated registry at as-of: `dead_from`,
 * `cause_of_death`, `death_known_on` and `peak_mcap_usd` are null until the death is known). Analytics
 * select subsets: `Pick<RegistryCoinRow, ...>`.
 */
export interface RegistryCoinRow {
  id: string;
  llama_id: string | null;
  gecko_id: string | null;
  name: string;
  symbol: string;
  issuer: string;
  peg_type: string;
  peg_currency: string;
  peg_mechanism: string;
  nav_token: boolean;
  floating_peg: boolean;
  is_dead: boolean;
  dead_from: string | null;
  cause_of_death: string | null;
  contracts_json: string;
  exchange_symbols_json: string;
  unreviewed: boolean;
  death_known_on: string | null;
  risk_json: string | null;
  redemption_json: string | null;
  reserves_json: string | null;
  peak_mcap_usd: number | null;
}

/**
 * Rows of named SQL selects (an analytic's `inputs`, a site-data artifact's `queries`) seen through `T`
 * (select name → row shape): the columns each `select` returns as DuckDB's JSON rows carry them (INTEGER and DOUBLE as numbers, BIGINT, HUGEINT and DECIMAL
 * as strings, VARCHAR and DATE as strings, BOOLEAN as booleans, lists as arrays, NULL as null). A typed
 * view for reading, nothing is checked at run time: `T` follows the SQL (e.g. its `::integer` casts).
 */
export function inputsAs<T extends { [K in keyof T]: object }>(
  inputs: Record<string, Row[]>,
): { [K in keyof T]: T[K][] } {
  return inputs as unknown as { [K in keyof T]: T[K][] };
}

/**
 * A TypeScript step of the model DAG for logic clearer in TS than SQL (state machines, scoring).
 * It reads the results of `inputs` (one SQL select each, over models that ran before it), runs as a
 * pure function of those rows and the build's as-of, and writes every table of `outputs`. SQL
 * models that read an output table run after it.
 */
export interface Analytic {
  /** DAG node name (snake_case). */
  name: string;
  /**
   * Layer of the node (default `intermediate`). A `marts` analytic may read marts (supply history,
   * the freeze ledger, flows); SQL marts may still read its outputs.
   */
  layer?: "intermediate" | "marts";
  /** Input name → one `select` over existing models, with an `order by` (reproducibility). */
  inputs: Record<string, string>;
  /** Output table → column types. */
  outputs: Record<string, Record<string, ColumnType>>;
  /**
   * Computes every output table. `rejected` counts input rows refused by a quality rule, by
   * reason; the build reports them in the manifest.
   */
  run(
    inputs: Record<string, Row[]>,
    ctx: { asOf: number },
  ): { tables: Record<string, Row[]>; rejected?: Record<string, number> };
}

/** Rows grouped by `stablecoin_id`, each group in input order; a coin without rows has no entry. */
export function groupByCoin<R extends { stablecoin_id: string }>(rows: R[]): Map<string, R[]> {
  const m = new Map<string, R[]>();
  for (const r of rows) {
    const a = m.get(r.stablecoin_id);
    if (a) a.push(r);
    else m.set(r.stablecoin_id, [r]);
  }
  return m;
}
