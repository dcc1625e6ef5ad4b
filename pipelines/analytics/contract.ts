import type { ColumnType } from "../sources/types.ts";

/** A row read from or written to the warehouse: column name → JSON value. */
export type Row = Record<string, any>;

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
