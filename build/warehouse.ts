import type { Db } from "./duckdb.ts";

/**
 * Columns of `hist_supply_snapshots`, the history a build keeps across builds: one row per coin and
 * UTC day (`native` in peg units, `usd` provisional, `source` the producer).
 */
export const HIST_COLUMNS = "stablecoin_id varchar, date date, native double, usd double, source varchar";

const quoted = (path: string) => `'${path.replace(/'/g, "''")}'`;

/** Copies the persisted history of the warehouse file (when it exists) into `hist_supply_snapshots`. */
export async function readHistory(db: Db, warehousePath: string): Promise<void> {
  await db.exec(`attach ${quoted(warehousePath)} as wh (read_only)`);
  await db.exec("insert into hist_supply_snapshots select * from wh.hist_supply_snapshots");
  await db.exec("detach wh");
}

/**
 * Upserts this build's list-derived daily supply points (native units; `usd` provisional) into the
 * persistent warehouse (created when missing). Only this build's own list points (priority 2), never
 * the persisted copies it read (priority 3), so a day is stored once.
 */
export async function persistHistory(db: Db, warehousePath: string): Promise<void> {
  const own = "from int_supply_history_points where source = 'defillama-list' and priority = 2";
  await db.exec(`attach ${quoted(warehousePath)} as wh`);
  await db.exec(`create table if not exists wh.hist_supply_snapshots (${HIST_COLUMNS})`);
  await db.exec(
    `delete from wh.hist_supply_snapshots where (stablecoin_id, date) in (select stablecoin_id, date ${own})`,
  );
  await db.exec(
    `insert into wh.hist_supply_snapshots select stablecoin_id, date, native, usd, source ${own} order by all`,
  );
  await db.exec("detach wh");
}
