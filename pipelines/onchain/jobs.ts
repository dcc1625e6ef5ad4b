import pLimit from "p-limit";
import { z } from "zod";
import type { EvmRpc } from "../sources/evm-rpc.ts";
import { BlockHeaderCache } from "./decode.ts";
import { type SyncOptions, type SyncResult, chunkSizeOf, readRange, syncAll, unsyncableReason } from "./ingest.ts";
import type { AmountUpdate, LedgerStore } from "./ledger-store.ts";
import type { TrackedConfig } from "./tracked.ts";
import type { OnchainEventRow } from "./contract.ts";
import type { HttpClient } from "../sources/http-client.ts";
import { syncTronConfig, type TronSyncResult } from "./ingest-tron.ts";
import { must } from "../../lib/must.ts";

/**
 * Operator jobs over the on-chain ledger (spec 4.5 admin endpoints), runnable from the CLI
 * (`npx tsx build/onchain-cli.ts <job> --param value …`) and callable by the API's admin routes.
 * Parameters are parsed by the exported zod schemas (strings from a CLI or a query string are
 * accepted: integers as digits, booleans as true/false/1/0); a bad parameter or a filter matching
 * nothing throws JobInputError (HTTP 400 class). Block numbers are EVM blocks; times Unix s; Tron
 * cursors are block timestamps in ms; amounts base units as decimal strings.
 */

/** A job input error: render as HTTP 400 `{ "error": message }` (CLI exit code 2). */
export class JobInputError extends Error {
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = "JobInputError";
  }
}

/** EVM blocks a reset rolls freeze cursors back. */
export const RESET_EVM_BLOCKS = 50_000;
/** Tron reset window: 7 days in ms (Tron cursors are block timestamps in ms). */
export const RESET_TRON_MS = 7 * 86_400 * 1000;

const FREEZE_KINDS = ["blacklist", "unblacklist", "destroy"] as const;

const intParam = (min: number, max: number) =>
  z
    .union([
      z.number(),
      z
        .string()
        .trim()
        .regex(/^-?\d+$/, "expected an integer")
        .transform(Number),
    ])
    .pipe(z.number().int().min(min).max(max));
const boolParam = z.union([
  z.boolean(),
  z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1"),
]);
const optText = z.string().trim().min(1).optional();

function parse<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const r = schema.safeParse(params ?? {});
  if (!r.success)
    throw new JobInputError(r.error.issues.map((i) => `${i.path.join(".") || "params"}: ${i.message}`).join("; "));
  return r.data;
}

/** Parameters of backfill-mint-burn: configKey, fromBlock, toBlock (≥ fromBlock), chunkSize 1..50000 (50000), maxChunks 1..1000 (24). */
export const BackfillMintBurnParamsSchema = z
  .object({
    configKey: z.string().trim().min(1),
    fromBlock: intParam(0, Number.MAX_SAFE_INTEGER),
    toBlock: intParam(0, Number.MAX_SAFE_INTEGER),
    chunkSize: intParam(1, 50_000).default(50_000),
    maxChunks: intParam(1, 1000).default(24),
  })
  .refine((p) => p.toBlock >= p.fromBlock, { message: "toBlock must be ≥ fromBlock", path: ["toBlock"] });

/** Parameters of remediate-blacklist-amount-gaps: chainId?, stablecoin? (id or symbol), limit 1..200 (25), dryRun (true), onlyMissingProvenance (true), maxAttempts 0..10000 (25). */
export const RemediateParamsSchema = z.object({
  chainId: optText,
  stablecoin: optText,
  limit: intParam(1, 200).default(25),
  dryRun: boolParam.default(true),
  onlyMissingProvenance: boolParam.default(true),
  maxAttempts: intParam(0, 10_000).default(25),
});

/** Parameters of backfill-blacklist-current-balances: stablecoin? (id or symbol), chainId?, limit 1..2000 (500), dryRun (true). */
export const CurrentBalancesParamsSchema = z.object({
  stablecoin: optText,
  chainId: optText,
  limit: intParam(1, 2000).default(500),
  dryRun: boolParam.default(true),
});

/** Parameters of the ingest job: chunkSize 1..50000 (50000), maxChunks (unlimited), reorgDepth 0..100000 (64), configKey (only that config). */
export const IngestParamsSchema = z.object({
  chunkSize: intParam(1, 50_000).default(50_000),
  maxChunks: intParam(1, Number.MAX_SAFE_INTEGER).optional(),
  reorgDepth: intParam(0, 100_000).default(64),
  configKey: optText,
});

const matchesCoin = (c: TrackedConfig, coin: string | undefined) =>
  !coin || c.stablecoinId === coin.toLowerCase() || c.symbol.toLowerCase() === coin.toLowerCase();
const nowSecDefault = () => Math.floor(Date.now() / 1000);

/**
 * `ingest`: syncAll over the EVM `configs` (or the one `configKey`) with the given RPC, and, when a
 * TronGrid client is given (`opts.tron`), syncTronConfig over the supported Tron freeze configs.
 * Returns `{ ok, results: SyncResult[], tron: TronSyncResult[] }`; ok is false when any config
 * failed. Throws JobInputError for bad params or an unknown configKey.
 */
export async function runIngest(
  ledger: LedgerStore,
  rpc: EvmRpc,
  configs: TrackedConfig[],
  params: unknown,
  opts: Pick<SyncOptions, "log" | "nowSec" | "toBlock"> & { tron?: { client: HttpClient } } = {},
): Promise<{ ok: boolean; results: SyncResult[]; tron: TronSyncResult[] }> {
  const p = parse(IngestParamsSchema, params);
  const selected = p.configKey ? configs.filter((c) => c.configKey === p.configKey) : configs;
  if (p.configKey && selected.length === 0) throw new JobInputError(`unknown configKey: ${p.configKey}`);
  const results = await syncAll(ledger, rpc, selected, {
    ...opts,
    chunkSize: p.chunkSize,
    maxChunks: p.maxChunks,
    reorgDepth: p.reorgDepth,
  });
  const tron: TronSyncResult[] = [];
  if (opts.tron) {
    for (const c of selected.filter(
      (x) => x.chain === "tron" && x.purpose === "freeze" && x.unsupportedReason === null,
    )) {
      tron.push(await syncTronConfig(ledger, opts.tron.client, c, { nowSec: opts.nowSec }));
    }
  }
  return { ok: results.every((r) => r.status !== "failed") && tron.every((r) => r.status !== "failed"), results, tron };
}

/**
 * `reset-blacklist-sync`: rolls the cursors of freeze configs back — EVM by 50,000 blocks, Tron by 7
 * days (ms) — without deleting rows (re-reading is idempotent). An EVM cursor that would go below the
 * config's start block is removed (the next sync starts there). Stored block hashes are cleared.
 * Returns `{ ok: true, evmReset, tronReset }` (cursors changed).
 */
export async function resetBlacklistSync(
  ledger: LedgerStore,
  configs: TrackedConfig[],
  opts: { nowSec?: () => number } = {},
): Promise<{ ok: true; evmReset: number; tronReset: number }> {
  const freeze = new Map(configs.filter((c) => c.purpose === "freeze").map((c) => [c.configKey, c]));
  const updates: { configKey: string; lastBlock: number; lastBlockHash: string | null }[] = [];
  let evmReset = 0,
    tronReset = 0;
  for (const cur of await ledger.cursors()) {
    const c = freeze.get(cur.configKey);
    if (!c) continue;
    if (c.chain === "tron") {
      updates.push({
        configKey: cur.configKey,
        lastBlock: Math.max(cur.lastBlock - RESET_TRON_MS, 0),
        lastBlockHash: null,
      });
      tronReset += 1;
    } else {
      const back = cur.lastBlock - RESET_EVM_BLOCKS;
      updates.push({
        configKey: cur.configKey,
        lastBlock: back < (c.startBlock ?? 0) ? -1 : back,
        lastBlockHash: null,
      });
      evmReset += 1;
    }
  }
  await ledger.setCursors(updates, (opts.nowSec ?? nowSecDefault)());
  return { ok: true, evmReset, tronReset };
}

/** `debug-sync-state`: every cursor as `{ config_key, last_block }`, sorted by config_key. */
export async function debugSyncState(ledger: LedgerStore): Promise<{ config_key: string; last_block: number }[]> {
  return (await ledger.cursors()).map((c) => ({ config_key: c.configKey, last_block: c.lastBlock }));
}

/** Result of backfill-mint-burn. `nextFromBlock` is where to continue when `done` is false. */
export interface BackfillMintBurnResult {
  configKey: string;
  fromBlock: number;
  /** Requested toBlock, clamped to the chain's safe head. */
  toBlock: number;
  safeHead: number;
  chunks: number;
  rows: number;
  /** Last block re-read (null when nothing was). */
  processedThrough: number | null;
  done: boolean;
  nextFromBlock: number | null;
}

/**
 * `backfill-mint-burn`: re-reads blocks [fromBlock, toBlock] (clamped to the safe head) of one supply
 * config in `chunkSize` ranges, at most `maxChunks`, each range replacing that config's rows of those
 * blocks in ONE transaction (idempotent: running it twice leaves the same rows). Never moves the sync
 * cursor. Throws JobInputError for bad params, an unknown or non-supply config, or one that cannot be
 * synced here (Tron, unsupported, no RPC); RpcUnavailableError when a read fails everywhere
 * (committed ranges stay).
 */
export async function backfillMintBurn(
  ledger: LedgerStore,
  rpc: EvmRpc,
  configs: TrackedConfig[],
  params: unknown,
  opts: { nowSec?: () => number; log?: SyncOptions["log"] } = {},
): Promise<BackfillMintBurnResult> {
  const p = parse(BackfillMintBurnParamsSchema, params);
  const config = configs.find((c) => c.configKey === p.configKey);
  if (!config) throw new JobInputError(`unknown configKey: ${p.configKey}`);
  if (config.purpose !== "supply") throw new JobInputError(`${p.configKey} is not a mint/burn (supply) config`);
  const why = unsyncableReason(config, rpc);
  if (why) throw new JobInputError(`${p.configKey} cannot be read here: ${why}`);
  const chunkSize = chunkSizeOf(p.chunkSize);
  rpc.expectChainId(config.chain, config.evmChainId);
  const safeHead = Number(await rpc.safeHead(config.chain));
  const toBlock = Math.min(p.toBlock, safeHead);
  const now = opts.nowSec ?? nowSecDefault;
  const headers = new BlockHeaderCache(rpc, config.chain);
  const res: BackfillMintBurnResult = {
    configKey: config.configKey,
    fromBlock: p.fromBlock,
    toBlock,
    safeHead,
    chunks: 0,
    rows: 0,
    processedThrough: null,
    done: false,
    nextFromBlock: p.fromBlock,
  };
  let from = p.fromBlock;
  while (from <= toBlock && res.chunks < p.maxChunks) {
    const to = Math.min(from + chunkSize - 1, toBlock);
    let range = await readRange(rpc, config, from, to, headers);
    for (let retry = 0; range.reorg && retry < 3; retry++) {
      headers.clear();
      range = await readRange(rpc, config, from, to, headers);
    }
    if (range.reorg) throw new Error(`${config.configKey}: blocks ${from}-${to} keep changing (${range.reorg})`);
    if (range.malformed.length)
      opts.log?.("warn", "malformed logs skipped", {
        configKey: config.configKey,
        fromBlock: from,
        toBlock: to,
        logs: range.malformed.slice(0, 20),
      });
    await ledger.commitRange({
      configKey: config.configKey,
      rows: range.rows,
      unknownTopics: range.unknownTopics,
      replaceBlocks: { fromBlock: from, toBlock: to },
      nowSec: now(),
    });
    opts.log?.("info", "backfill range committed", {
      configKey: config.configKey,
      fromBlock: from,
      toBlock: to,
      rows: range.rows.length,
    });
    res.chunks += 1;
    res.rows += range.rows.length;
    res.processedThrough = to;
    from = to + 1;
  }
  res.done = from > toBlock;
  res.nextFromBlock = res.done ? null : from;
  return res;
}

/** Result of remediate-blacklist-amount-gaps. */
export interface RemediateResult {
  dryRun: boolean;
  /** Freeze rows with status provider_failed/recoverable_pending matching the filters (and provenance rule). */
  gapRows: number;
  /** Gap rows skipped because they already had `maxAttempts` failed reads. */
  exhausted: number;
  /** Ids selected (≤ limit), oldest first. */
  candidates: string[];
  attempted: number;
  resolved: number;
  failed: number;
  /** Selected rows not read here: Tron rows, chains without RPC. */
  skipped: number;
  /** True when the time budget ended the run early. */
  budgetExhausted: boolean;
}

const GAP_STATUSES: OnchainEventRow["amount_status"][] = ["provider_failed", "recoverable_pending"];

/**
 * `remediate-blacklist-amount-gaps`: re-reads `balanceOf(address)` at block − 1 for freeze-family rows
 * whose amount is missing (status provider_failed or recoverable_pending; with onlyMissingProvenance,
 * only rows whose amount_source is `unavailable`), filtered by chainId / stablecoin (id or symbol),
 * oldest first (block time, block, log index), at most `limit`, skipping rows with ≥ maxAttempts failed reads.
 * dryRun (default) only lists. A successful read sets amount_source `historical_balance`, status
 * `resolved`; a failed one keeps amount_raw null, sets `provider_failed` and counts an attempt. Stops
 * starting reads after `budgetMs` (default 900 s). Throws JobInputError for bad params.
 *
 * The rows considered are the ledger's AND `opts.recorded`: the decoded logs of the recorded public
 * captures (bhemen USDT/USDP archives, pipelines/sources/onchain/onchain-events.ts) that builds load beside the
 * ledger. A recorded row whose id the ledger already holds is the ledger's row. A recorded row that is
 * read here is first written to the ledger (its config's rows, no cursor move), so the resolved amount
 * is stored where builds read it.
 */
export async function remediateBlacklistAmountGaps(
  ledger: LedgerStore,
  rpc: EvmRpc,
  configs: TrackedConfig[],
  params: unknown,
  opts: { nowSec?: () => number; budgetMs?: number; log?: SyncOptions["log"]; recorded?: OnchainEventRow[] } = {},
): Promise<RemediateResult> {
  const p = parse(RemediateParamsSchema, params);
  const now = opts.nowSec ?? nowSecDefault;
  const wanted = p.stablecoin;
  const coinIds = wanted ? new Set(configs.filter((c) => matchesCoin(c, wanted)).map((c) => c.stablecoinId)) : null;
  if (wanted && coinIds?.size === 0) coinIds.add(wanted.toLowerCase());
  const isGap = (r: OnchainEventRow) =>
    (FREEZE_KINDS as readonly string[]).includes(r.kind) &&
    GAP_STATUSES.includes(r.amount_status) &&
    (!p.onlyMissingProvenance || r.amount_source === "unavailable") &&
    (!p.chainId || r.chain_id === p.chainId) &&
    (!coinIds || coinIds.has(r.stablecoin_id));
  const inLedger = new Set((await ledger.events({ kinds: [...FREEZE_KINDS] })).map((r) => r.id));
  const recordedOnly = new Set<string>();
  const recordedGaps = (opts.recorded ?? []).filter((r) => {
    if (inLedger.has(r.id) || recordedOnly.has(r.id) || !isGap(r)) return false;
    recordedOnly.add(r.id);
    return true;
  });
  const gaps = [
    ...(
      await ledger.events({
        kinds: [...FREEZE_KINDS],
        amountStatuses: GAP_STATUSES,
        ...(p.onlyMissingProvenance ? { amountSources: ["unavailable" as const] } : {}),
        ...(p.chainId ? { chainId: p.chainId } : {}),
      })
    ).filter((r) => !coinIds || coinIds.has(r.stablecoin_id)),
    ...recordedGaps,
  ].sort(
    (a, b) => a.ts - b.ts || a.block_number - b.block_number || a.log_index - b.log_index || (a.id < b.id ? -1 : 1),
  );
  const attempts = await ledger.amountAttempts();
  const eligible = gaps.filter((r) => (attempts.get(r.id) ?? 0) < p.maxAttempts);
  const selected = eligible.slice(0, p.limit);
  const res: RemediateResult = {
    dryRun: p.dryRun,
    gapRows: gaps.length,
    exhausted: gaps.length - eligible.length,
    candidates: selected.map((r) => r.id),
    attempted: 0,
    resolved: 0,
    failed: 0,
    skipped: 0,
    budgetExhausted: false,
  };
  if (p.dryRun) return res;
  const byKey = new Map(configs.map((c) => [c.configKey, c]));
  const deadline = Date.now() + (opts.budgetMs ?? 900_000);
  const updates: AmountUpdate[] = [];
  const failed: { id: string; error: string }[] = [];
  const limit = pLimit(8);
  await Promise.all(
    selected.map((row) =>
      limit(async () => {
        if (row.chain_id === "tron" || !rpc.hasChain(row.chain_id) || row.block_number < 1) {
          res.skipped += 1;
          return;
        }
        if (Date.now() > deadline) {
          res.budgetExhausted = true;
          return;
        }
        const cfg = byKey.get(row.config_key);
        if (cfg) rpc.expectChainId(cfg.chain, cfg.evmChainId);
        res.attempted += 1;
        try {
          const bal = await rpc.balanceOf(
            row.chain_id,
            row.contract_address,
            row.address,
            BigInt(row.block_number - 1),
          );
          updates.push({
            id: row.id,
            amount_raw: bal.toString(),
            amount_source: "historical_balance",
            amount_status: "resolved",
          });
          res.resolved += 1;
        } catch (err) {
          updates.push({
            id: row.id,
            amount_raw: null,
            amount_source: row.amount_source,
            amount_status: "provider_failed",
          });
          failed.push({ id: row.id, error: (err as Error).message });
          res.failed += 1;
        }
      }),
    ),
  );
  // Recorded rows that were read go into the ledger first, so their outcome has a row to land on.
  const read = new Set(updates.map((u) => u.id));
  const imported = new Map<string, OnchainEventRow[]>();
  for (const r of selected)
    if (recordedOnly.has(r.id) && read.has(r.id))
      imported.set(r.config_key, [...(imported.get(r.config_key) ?? []), r]);
  for (const [key, rows] of imported) await ledger.commitRange({ configKey: key, rows, nowSec: now() });
  await ledger.updateAmounts(updates, failed, now());
  opts.log?.("info", "blacklist amount gaps remediated", {
    attempted: res.attempted,
    resolved: res.resolved,
    failed: res.failed,
  });
  return res;
}

/** Per-config counts of backfill-blacklist-current-balances. */
export interface CurrentBalancesConfigResult {
  configKey: string;
  /** Distinct addresses with a blacklist event in the ledger. */
  blacklistedAddresses: number;
  /** Addresses chosen this run (never-snapshotted first, then the oldest snapshots). */
  selected: number;
  read: number;
  written: number;
  failed: number;
  /** Why the config was not read (e.g. `not-an-evm-chain`, `no-rpc-configured`), else null. */
  skipped: string | null;
}

/**
 * `backfill-blacklist-current-balances`: snapshots the current `balanceOf` (at the chain's safe head)
 * of addresses blacklisted on the freeze configs matching stablecoin (id or symbol) / chainId, into
 * `onchain_current_balances` (kept after unblacklist; a failed read keeps the previous snapshot).
 * At most `limit` addresses in total. dryRun (default) only counts. Throws JobInputError when the
 * filters match no freeze config (HTTP 400) or params are bad.
 */
export async function backfillBlacklistCurrentBalances(
  ledger: LedgerStore,
  rpc: EvmRpc,
  configs: TrackedConfig[],
  params: unknown,
  opts: { nowSec?: () => number; log?: SyncOptions["log"] } = {},
): Promise<{
  dryRun: boolean;
  configs: CurrentBalancesConfigResult[];
  totals: { selected: number; read: number; written: number; failed: number };
}> {
  const p = parse(CurrentBalancesParamsSchema, params);
  const matched = configs.filter(
    (c) =>
      c.purpose === "freeze" &&
      c.unsupportedReason === null &&
      matchesCoin(c, p.stablecoin) &&
      (!p.chainId || c.chain === p.chainId),
  );
  if (matched.length === 0)
    throw new JobInputError(
      `no tracked freeze config matches${p.stablecoin ? ` stablecoin=${p.stablecoin}` : ""}${p.chainId ? ` chainId=${p.chainId}` : ""}`,
    );
  const now = opts.nowSec ?? nowSecDefault;
  const snaps = new Map(
    (await ledger.currentBalances(matched.map((c) => c.configKey))).map((s) => [
      `${s.configKey}|${s.address}`,
      s.observedAt,
    ]),
  );
  // Candidates across every matched config: never-snapshotted addresses first, then the oldest snapshots.
  const out: CurrentBalancesConfigResult[] = [];
  const candidates: { config: TrackedConfig; address: string; observedAt: number }[] = [];
  for (const c of matched) {
    const addrs = [
      ...new Set((await ledger.events({ configKeys: [c.configKey], kinds: ["blacklist"] })).map((r) => r.address)),
    ];
    const skipped = unsyncableReason(c, rpc);
    out.push({
      configKey: c.configKey,
      blacklistedAddresses: addrs.length,
      selected: 0,
      read: 0,
      written: 0,
      failed: 0,
      skipped,
    });
    if (!skipped)
      for (const address of addrs)
        candidates.push({ config: c, address, observedAt: snaps.get(`${c.configKey}|${address}`) ?? -1 });
  }
  candidates.sort(
    (a, b) =>
      a.observedAt - b.observedAt ||
      (a.config.configKey < b.config.configKey ? -1 : a.config.configKey > b.config.configKey ? 1 : 0) ||
      (a.address < b.address ? -1 : a.address > b.address ? 1 : 0),
  );
  const selected = candidates.slice(0, p.limit);
  const resultOf = new Map(out.map((r) => [r.configKey, r]));
  // Candidates come from the matched configs, each with its result in `out`.
  const resultFor = (configKey: string) => must(resultOf.get(configKey), `result of config ${configKey}`);
  for (const x of selected) resultFor(x.config.configKey).selected += 1;
  if (!p.dryRun && selected.length > 0) {
    const heads = new Map<string, Promise<bigint>>();
    const limit = pLimit(8);
    const rows = (
      await Promise.all(
        selected.map((x) =>
          limit(async () => {
            const c = x.config,
              r = resultFor(c.configKey);
            try {
              rpc.expectChainId(c.chain, c.evmChainId);
              let headOfChain = heads.get(c.chain);
              if (!headOfChain) {
                headOfChain = rpc.safeHead(c.chain);
                heads.set(c.chain, headOfChain);
              }
              const head = await headOfChain;
              const bal = await rpc.balanceOf(c.chain, c.address as string, x.address, head);
              r.read += 1;
              return {
                configKey: c.configKey,
                address: x.address,
                balanceRaw: bal.toString(),
                blockNumber: Number(head),
                observedAt: now(),
              };
            } catch {
              r.failed += 1;
              return null;
            }
          }),
        ),
      )
    ).filter((x) => x !== null);
    await ledger.upsertCurrentBalances(rows);
    for (const row of rows) resultFor(row.configKey).written += 1;
  }
  const sum = (k: "selected" | "read" | "written" | "failed") => out.reduce((a, r) => a + r[k], 0);
  opts.log?.("info", "blacklist current balances", {
    configs: out.length,
    written: sum("written"),
    failed: sum("failed"),
  });
  return {
    dryRun: p.dryRun,
    configs: out,
    totals: { selected: sum("selected"), read: sum("read"), written: sum("written"), failed: sum("failed") },
  };
}
