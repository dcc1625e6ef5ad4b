import type { HttpClient } from "../sources/http-client.ts";
import { fetchTronEventPages } from "../sources/trongrid.ts";
import type { LedgerStore } from "./ledger-store.ts";
import type { TrackedConfig } from "./tracked.ts";

/** What one Tron config's sync did: pages and rows committed, the cursor (block time, Unix ms) reached. */
export interface TronSyncResult {
  configKey: string;
  status: "synced" | "failed";
  reason: string | null;
  pages: number;
  rows: number;
  unknownEvents: number;
  droppedEvents: number;
  /** Durable cursor after the run (Unix ms of block time), null when nothing was read. */
  cursorMs: number | null;
}

/**
 * Syncs one Tron freeze config from TronGrid into the ledger with the EVM cursor semantics: the
 * cursor (`onchain_cursors.last_block`, block time in Unix ms) resumes inclusively, every page is
 * one transaction with its rows and the page's durable cursor (`cursorMs` of fetchTronEventPages),
 * and re-read rows replace themselves by id, so a crash never loses or duplicates an event.
 * `startMs` is where a config without a cursor starts (default 0: the whole history). A failing
 * page leaves the cursor at the last committed page and returns status `failed` with the reason.
 */
export async function syncTronConfig(
  ledger: LedgerStore,
  client: HttpClient | null,
  config: TrackedConfig,
  opts: {
    startMs?: number;
    maxBlockTimestampMs?: number;
    pageSize?: number;
    apiKey?: string;
    nowSec?: () => number;
    minRequestIntervalMs?: number;
  } = {},
): Promise<TronSyncResult> {
  const result: TronSyncResult = {
    configKey: config.configKey,
    status: "synced",
    reason: null,
    pages: 0,
    rows: 0,
    unknownEvents: 0,
    droppedEvents: 0,
    cursorMs: null,
  };
  const nowSec = opts.nowSec ?? (() => Math.floor(Date.now() / 1000));
  const cursor = (await ledger.cursors()).find((c) => c.configKey === config.configKey);
  const from = cursor && cursor.lastBlock >= 0 ? cursor.lastBlock : (opts.startMs ?? 0);
  result.cursorMs = cursor ? cursor.lastBlock : null;
  try {
    for await (const page of fetchTronEventPages(client, config, {
      minBlockTimestampMs: from,
      maxBlockTimestampMs: opts.maxBlockTimestampMs,
      pageSize: opts.pageSize,
      apiKey: opts.apiKey,
      minRequestIntervalMs: opts.minRequestIntervalMs,
    })) {
      await ledger.commitRange({
        configKey: config.configKey,
        rows: page.rows,
        cursor: { lastBlock: page.cursorMs, lastBlockHash: null },
        nowSec: nowSec(),
      });
      result.pages++;
      result.rows += page.rows.length;
      result.unknownEvents += Object.values(page.unknown).reduce((s, n) => s + n, 0);
      result.droppedEvents += Object.values(page.dropped).reduce((s, n) => s + n, 0);
      result.cursorMs = page.cursorMs;
    }
  } catch (err) {
    result.status = "failed";
    result.reason = (err as Error).message;
  }
  return result;
}
