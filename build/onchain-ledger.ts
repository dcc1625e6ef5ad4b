import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { ONCHAIN_EVENT_COLUMNS } from "../pipelines/onchain/contract.ts";
import type { Capture } from "../pipelines/sources/types.ts";
import type { Db } from "./duckdb.ts";

const quoted = (path: string) => `'${path.replace(/'/g, "''")}'`;

/**
 * The on-chain ledger the ingestion jobs write (`onchain_events` in a DuckDB file, see
 * pipelines/onchain/ledger-store.ts) as one live capture of `onchain.events`: the rows whose block
 * time is at or before `asOf` (Unix s), ordered by id; `observedAt` is the last sync (newest cursor
 * update at or before `asOf`), else the newest such block time.
 * `unknownTopics`: logs of tracked contracts with a topic no family knows, counted per config by
 * ingestion (reported as a manifest warning). Null when the file does not exist or holds no table
 * yet. A file locked by a running ingestion job is retried for about 10 s, then throws an Error
 * naming the path (the previous build keeps serving).
 */
export async function readOnchainLedger(
  db: Db,
  path: string,
  asOf: number,
): Promise<{ capture: Capture; unknownTopics: Record<string, number> } | null> {
  if (!existsSync(path)) return null;
  for (let attempt = 0; ; attempt++) {
    try {
      await db.exec(`attach ${quoted(path)} as onchain_ledger (read_only)`);
      break;
    } catch (err) {
      if (attempt >= 20)
        throw new Error(
          `on-chain ledger ${path} cannot be opened (is an ingestion job still running?): ${(err as Error).message}`,
        );
      await sleep(500);
    }
  }
  try {
    const [{ n }] = await db.all<{ n: number }>(
      "select count(*)::integer as n from duckdb_tables() where database_name = 'onchain_ledger' and table_name = 'onchain_events'",
    );
    if (n === 0) return null;
    const cols = Object.keys(ONCHAIN_EVENT_COLUMNS).join(", ");
    const rows = await db.all<Record<string, unknown>>(
      `select ${cols} from onchain_ledger.onchain_events where ts <= $as_of order by id`,
      { as_of: asOf },
    );
    for (const r of rows)
      for (const [k, t] of Object.entries(ONCHAIN_EVENT_COLUMNS))
        if (t === "BIGINT" && r[k] !== null) r[k] = Number(r[k]);
    const text = JSON.stringify(rows);
    const [{ c }] = await db.all<{ c: number }>(
      "select count(*)::integer as c from duckdb_tables() where database_name = 'onchain_ledger' and table_name = 'onchain_cursors'",
    );
    const synced = c
      ? (
          await db.all<{ at: string | null }>(
            "select max(updated_at)::varchar as at from onchain_ledger.onchain_cursors where updated_at <= $as_of",
            { as_of: asOf },
          )
        )[0].at
      : null;
    const observedAt = synced !== null ? Number(synced) : rows.reduce((m, r) => Math.max(m, r.ts as number), 0) || asOf;
    const [{ u }] = await db.all<{ u: number }>(
      "select count(*)::integer as u from duckdb_tables() where database_name = 'onchain_ledger' and table_name = 'onchain_unknown_topics'",
    );
    const unknown = u
      ? await db.all<{ config_key: string; n: string }>(
          "select config_key, sum(count)::varchar as n from onchain_ledger.onchain_unknown_topics group by config_key order by config_key",
        )
      : [];
    return {
      capture: {
        endpoint: "onchain.events",
        params: { ledger: "live" },
        observedAt,
        origin: "live",
        path,
        sha256: createHash("sha256").update(text).digest("hex"),
        payload: { rows },
      },
      unknownTopics: Object.fromEntries(unknown.map((r) => [r.config_key, Number(r.n)])),
    };
  } finally {
    await db.exec("detach onchain_ledger");
  }
}
