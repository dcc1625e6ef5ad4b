import { trackedConfigs } from "../../pipelines/onchain/tracked.ts";
import { type DonationsLedger, loadDonations } from "../../pipelines/registry/donations.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";
import type { Registry } from "../../pipelines/registry/schema.ts";
import { type ListAsset, withUnreviewedCoins } from "../../pipelines/registry/unreviewed.ts";
import { ENDPOINTS, sourceCurrentWindows } from "../../pipelines/sources/endpoints.ts";
import type { Capture, CaptureInfo, ReaderProblem } from "../../pipelines/sources/types.ts";
import { VERDICT_COLUMNS } from "../../pipelines/analytics/depeg-verdicts.ts";
import type { SkippedCapture } from "../../site-data/manifest.ts";
import { type StoredVerdictFile, verdictRows } from "../depeg-verdicts.ts";
import type { Db } from "../duckdb.ts";
import { fileLedger, fileWarehouse, listCaptures, type LoadEffects, recordedCaptures } from "../effects.ts";
import { RawLoader, type SourceLoadReport } from "../load.ts";
import { log } from "../log.ts";
import type { Sink } from "../sinks/sink.ts";
import { utcDay } from "../time.ts";
import { HIST_COLUMNS } from "../warehouse.ts";

/**
 * Inputs of the load stage. `asOf` is Unix seconds. The outside world comes either from `effects`
 * (build/effects.ts: captures, warehouse, ledger, logger) or from paths: captures from `captureDir`
 * (recorded files, plus the live `raw/` captures of `sink` when given) or, for tests, `captures`
 * directly (used as given, not selected at as-of); the warehouse and ledger files when set; logs to stderr.
 */
export type LoadOptions = {
  asOf: number;
  /** Curated registry (default: pipelines/registry/registry.json); a provisional record is added per unknown list asset. */
  registry?: Registry;
  /** Folder DuckDB spills to when memory runs short (its `temp_directory`; default a folder of the database's own, see Db.open). */
  spillDir?: string;
} & (
  | {
      effects: LoadEffects;
      captureDir?: never;
      captures?: never;
      warehousePath?: never;
      sink?: never;
      onchainLedgerPath?: never;
    }
  | ({
      effects?: never;
      /** Persistent warehouse file whose history tables are read when it exists; null/absent for none. */
      warehousePath?: string | null;
      /** Storage holding live raw captures (`raw/`); absent: recorded captures only. */
      sink?: Sink;
      /** On-chain ledger file the ingestion jobs write (read when it exists); null/absent for none. */
      onchainLedgerPath?: string | null;
    } & ({ captureDir: string; captures?: never } | { captures: Capture[]; captureDir?: never }))
);

/** The effects LoadOptions name: `effects` itself, or the ones its paths describe (stderr logger). */
export function loadEffectsOf(opts: LoadOptions): LoadEffects {
  if (opts.effects) return opts.effects;
  return {
    captures: opts.captures
      ? listCaptures(opts.captures, { select: false })
      : recordedCaptures(opts.captureDir as string, opts.sink),
    warehouse: opts.warehousePath ? fileWarehouse(opts.warehousePath) : null,
    ledger: opts.onchainLedgerPath ? fileLedger(opts.onchainLedgerPath) : null,
    logger: log,
  };
}

/** What the load stage put in the database, for the model stage and the manifest. */
export interface LoadedInputs {
  asOf: number;
  /** UTC day of as-of, `YYYY-MM-DD`. */
  asOfDay: string;
  /** Captures loaded (selected at as-of), in load order; their payloads are not kept. */
  captures: CaptureInfo[];
  /** Per endpoint: captures used, rows, drop counts, freshness. */
  sources: SourceLoadReport[];
  /** Recorded file → reason → rows its reader skipped. */
  readerDropped: Record<string, Record<string, number>>;
  /** Recorded file → first located row problems. */
  readerProblems: Record<string, ReaderProblem[]>;
  /** Optional recorded captures skipped as empty (manifest `skippedCaptures`). */
  skippedCaptures: SkippedCapture[];
  /** Manifest warnings: unreviewed coins added, missing list capture, conflicting duplicate upstream rows. */
  warnings: string[];
  /** Endpoint → newest capture used (Unix s), null when none. */
  sourceObservedAt: Record<string, number | null>;
  /** Recorded depeg-history verdict files loaded into `operator_depeg_verdicts` (none without `effects.verdicts`). */
  depegVerdictFiles: StoredVerdictFile[];
}

/**
 * Last day of a dead date's period (`2022-05` → 2022-05-31, `2022` → 2022-12-31): a death is
 * only known once its whole stated period has passed, so a build as of T never flags a coin dead
 * on a date it could not have known.
 */
export function deathKnownOn(deadFrom: string | null): string | null {
  if (!deadFrom) return null;
  const [y, m, d] = deadFrom.split("-").map(Number);
  if (d) return deadFrom;
  const end = m ? new Date(Date.UTC(y, m, 0)) : new Date(Date.UTC(y, 11, 31));
  return end.toISOString().slice(0, 10);
}

/**
 * Loads `registry_coins` and `registry_chains`; throws an Error naming any coin id that appears more
 * than once. `is_dead` is judged at as-of: a coin is dead only
 * when its death is known on or before the as-of day (no look-ahead); `dead_from` is then null too.
 */
async function loadRegistryTables(db: Db, registry: Registry, asOfDay: string): Promise<string[]> {
  // One record per coin: a repeated id would fan out through every join of the DAG (and fail its
  // primary-key asserts only after minutes of work), so it stops the build here.
  const seen = new Set<string>();
  const repeated = [...new Set(registry.coins.map((c) => c.id).filter((id) => seen.size === seen.add(id).size))];
  if (repeated.length)
    throw new Error(
      `registry: coin id${repeated.length > 1 ? "s" : ""} ${repeated.join(", ")} appear${repeated.length > 1 ? "" : "s"} more than once; a coin is one curated registry record (pipelines/registry/registry.json)`,
    );
  await db.loadRows(
    "registry_coins",
    {
      id: "VARCHAR",
      llama_id: "VARCHAR",
      gecko_id: "VARCHAR",
      name: "VARCHAR",
      symbol: "VARCHAR",
      issuer: "VARCHAR",
      peg_type: "VARCHAR",
      peg_currency: "VARCHAR",
      peg_mechanism: "VARCHAR",
      nav_token: "BOOLEAN",
      floating_peg: "BOOLEAN",
      is_dead: "BOOLEAN",
      dead_from: "VARCHAR",
      cause_of_death: "VARCHAR",
      contracts_json: "VARCHAR",
      exchange_symbols_json: "VARCHAR",
      unreviewed: "BOOLEAN",
      death_known_on: "VARCHAR",
      risk_json: "VARCHAR",
      redemption_json: "VARCHAR",
      reserves_json: "VARCHAR",
      peak_mcap_usd: "DOUBLE",
    },
    registry.coins.map((c) => {
      const known = deathKnownOn(c.deadFrom);
      const dead = known !== null && known <= asOfDay;
      return {
        id: c.id,
        llama_id: c.llamaId,
        gecko_id: c.geckoId,
        name: c.name,
        symbol: c.symbol,
        issuer: c.issuer,
        peg_type: c.pegType,
        peg_currency: c.pegCurrency,
        peg_mechanism: c.pegMechanism,
        nav_token: c.navToken,
        floating_peg: c.floatingPeg,
        is_dead: dead,
        dead_from: dead ? c.deadFrom : null,
        cause_of_death: dead ? c.causeOfDeath : null,
        contracts_json: JSON.stringify(c.contracts),
        exchange_symbols_json: JSON.stringify(c.exchangeSymbols),
        unreviewed: c.provenance.includes("unreviewed"),
        death_known_on: dead ? known : null,
        risk_json: c.risk ? JSON.stringify(c.risk) : null,
        redemption_json: c.redemption ? JSON.stringify(c.redemption) : null,
        reserves_json: c.reserves ? JSON.stringify(c.reserves) : null,
        // the cemetery's peak market cap, like the cause of death, only once the death is known at as-of
        peak_mcap_usd: dead ? (c.peakMcapUsd ?? null) : null,
      };
    }),
  );
  await db.loadRows(
    "registry_chains",
    { id: "VARCHAR", name: "VARCHAR", tier: "VARCHAR", tier_source: "VARCHAR" },
    registry.chains.map((c) => ({
      id: c.id,
      name: c.name,
      tier: c.tier ?? null,
      tier_source: c.tierSource?.label ?? null,
    })),
  );
  await db.loadRows("registry_bridges", { chain: "VARCHAR", address: "VARCHAR", name: "VARCHAR" }, registry.bridges);
  await db.loadRows(
    "registry_tracked_contracts",
    {
      config_key: "VARCHAR",
      stablecoin_id: "VARCHAR",
      symbol: "VARCHAR",
      chain_id: "VARCHAR",
      contract_address: "VARCHAR",
      family: "VARCHAR",
      purpose: "VARCHAR",
      decimals: "BIGINT",
      start_block: "BIGINT",
      unsupported_reason: "VARCHAR",
    },
    trackedConfigs(registry).map((c) => ({
      config_key: c.configKey,
      stablecoin_id: c.stablecoinId,
      symbol: c.symbol,
      chain_id: c.chain,
      contract_address: c.address,
      family: c.family,
      purpose: c.purpose,
      decimals: c.decimals,
      start_block: c.startBlock,
      unsupported_reason: c.unsupportedReason,
    })),
  );
  return loadDonationTables(db, loadDonations(registry));
}

/**
 * Loads the donations ledger (pipelines/registry/donations.ts): `registry_donation_receipts` (every
 * valid receipt; the artifact keeps those received by as-of), `registry_donation_contracts` (reviewed
 * pairs) and `registry_donations_meta` (reconciliation time). Returns a manifest warning per kind of
 * rejected receipt.
 */
async function loadDonationTables(db: Db, ledger: DonationsLedger): Promise<string[]> {
  await db.loadRows(
    "registry_donation_receipts",
    {
      tx_hash: "VARCHAR",
      log_index: "BIGINT",
      chain: "VARCHAR",
      token_address: "VARCHAR",
      from_address: "VARCHAR",
      amount: "VARCHAR",
      received_at: "BIGINT",
      kind: "VARCHAR",
    },
    ledger.receipts.map((r) => ({
      tx_hash: r.txHash,
      log_index: r.logIndex,
      chain: r.chain,
      token_address: r.token,
      from_address: r.from,
      amount: r.amount,
      received_at: Math.floor(Date.parse(r.receivedAt) / 1000),
      kind: r.kind,
    })),
  );
  await db.loadRows(
    "registry_donation_contracts",
    { stablecoin_id: "VARCHAR", chain: "VARCHAR", contract_address: "VARCHAR" },
    ledger.qualifying.map((q) => ({ stablecoin_id: q.stablecoinId, chain: q.chain, contract_address: q.contract })),
  );
  await db.loadRows("registry_donations_meta", { reconciled_at: "BIGINT", rejected_receipts: "BIGINT" }, [
    {
      reconciled_at: ledger.reconciledAt,
      rejected_receipts: Object.values(ledger.rejected).reduce((a, b) => a + b, 0),
    },
  ]);
  return Object.entries(ledger.rejected).map(
    ([reason, n]) => `donations ledger ${ledger.path}: ${n} receipt${n === 1 ? "" : "s"} rejected (${reason})`,
  );
}

/**
 * Creates the build context (`build_context`: as_of Unix s, as_of_day), the declared freshness windows
 * (`source_current_windows`: endpoint, raw_table, window_sec; Endpoint.currentWindowSec) and the (empty) history table.
 * With `registry`, also loads the registry tables as given, without unreviewed coins (for callers that
 * load their own captures); loadAndModel instead calls `loadBuildRegistry` once captures are loaded.
 */
export async function prepareBuildDb(db: Db, asOf: number, registry?: Registry): Promise<void> {
  const asOfDay = utcDay(asOf);
  await db.exec("create table build_context as select $as_of::bigint as as_of, $as_of_day::date as as_of_day", {
    as_of: asOf,
    as_of_day: asOfDay,
  });
  await db.loadRows(
    "source_current_windows",
    { endpoint: "VARCHAR", raw_table: "VARCHAR", window_sec: "BIGINT" },
    sourceCurrentWindows(),
  );
  await db.exec(`create table hist_supply_snapshots (${HIST_COLUMNS})`);
  await db.loadRows("operator_depeg_verdicts", VERDICT_COLUMNS, []);
  if (registry) await loadRegistryTables(db, registry, asOfDay);
}

/** Assets of the newest DefiLlama `/stablecoins` capture loaded into the raw table (none without one). */
export async function loadedListAssets(db: Db): Promise<ListAsset[]> {
  const rows = await db.all<{
    llama_id: string;
    name: string;
    symbol: string;
    gecko_id: string | null;
    peg_type: string;
    peg_mechanism: string | null;
  }>(
    `select llama_id, name, symbol, gecko_id, peg_type, peg_mechanism from raw_defillama__stablecoins
     qualify row_number() over (partition by llama_id order by _observed_at desc) = 1
     order by llama_id`,
  );
  return rows.map((r) => ({
    llamaId: r.llama_id,
    name: r.name,
    symbol: r.symbol,
    geckoId: r.gecko_id,
    pegType: r.peg_type,
    pegMechanism: r.peg_mechanism,
  }));
}

/**
 * Loads the registry tables for a build whose captures are loaded: the curated registry plus a
 * provisional `unreviewed` record for every list asset it does not know (withUnreviewedCoins), so an
 * unknown upstream coin never blocks publication. Returns the manifest warnings (one per added coin).
 */
export async function loadBuildRegistry(db: Db, asOf: number, registry: Registry): Promise<string[]> {
  const { registry: full, warnings } = withUnreviewedCoins(registry, await loadedListAssets(db));
  return [...warnings, ...(await loadRegistryTables(db, full, utcDay(asOf)))];
}

/**
 * Load stage into an empty database: build context, persisted history (the warehouse's, when there is
 * one), captures selected at as-of with the on-chain ledger's (CaptureSource.collect hands each capture
 * to RawLoader.stage as it is read, so one file's payloads are in memory at a time; RawLoader.finish
 * loads the selected ones in order), then the registry tables incl. unreviewed coins. Warns when no
 * list capture was observed by as-of. Throws on an unreadable or missing capture (the message names
 * the file, or BALLAST_CAPTURE_DIR for a missing directory).
 */
export async function loadInputs(db: Db, opts: LoadOptions): Promise<LoadedInputs> {
  const fx = loadEffectsOf(opts);
  await prepareBuildDb(db, opts.asOf);
  await fx.warehouse?.read(db);
  const loader = new RawLoader(db, opts.asOf, fx.stagedCache ?? null);
  const {
    captures: selected,
    readerDropped,
    readerProblems,
    skippedCaptures,
  } = await fx.captures.collect(opts.asOf, (info, payload) => loader.stage(info, payload));
  const ledger = fx.ledger ? await fx.ledger.read(db, opts.asOf) : null;
  let captures = selected;
  if (ledger) {
    const { payload, ...info } = ledger.capture;
    await loader.stage(info, payload);
    captures = [...selected, info];
  }
  fx.logger("info", "load", "captures selected", { count: captures.length, parsedBefore: loader.cacheHits });
  const sources = await loader.finish(captures);
  fx.stagedCache?.prune();
  const depegVerdictFiles = fx.verdicts ? await fx.verdicts.read() : [];
  if (depegVerdictFiles.length) {
    await db.loadRows(
      "operator_depeg_verdicts",
      VERDICT_COLUMNS,
      verdictRows(depegVerdictFiles).map((r) => ({ ...r })),
      true,
    );
  }
  const warnings = await loadBuildRegistry(db, opts.asOf, opts.registry ?? loadRegistry());
  const list = sources.find((s) => s.endpoint === "defillama.stablecoins" && s.rows > 0);
  const listWindowSec = ENDPOINTS["defillama.stablecoins"].currentWindowSec ?? 0;
  if (!list) {
    // As-of fallback (int_coins_supply_current): current state from the supply history instead.
    warnings.push(
      "source defillama.stablecoins: no capture observed at or before as-of; current supply from the latest supply-history point within its source's freshness window (3 days for a daily point) (supplySource defillama-history-gap-fill / coingecko-fallback)",
    );
  } else if (list.newestObservedAt !== null && opts.asOf - list.newestObservedAt > listWindowSec) {
    // A list older than its freshness window is history, never the current state (int_coins_supply_usd).
    warnings.push(
      `source defillama.stablecoins: the newest capture (observed ${new Date(list.newestObservedAt * 1000).toISOString()}) is older than its ${listWindowSec / 86400}-day freshness window; current supply from the latest supply-history point within its source's freshness window (supplySource defillama-history-gap-fill / coingecko-fallback), coins without one are null (stale-beyond-window)`,
    );
  }
  for (const s of sources) {
    const n = s.dropped["duplicate-conflicting"] ?? 0;
    if (n)
      warnings.push(
        `source ${s.endpoint}: ${n} repeated upstream entr${n === 1 ? "y" : "ies"} with the id of an earlier entry but other values (dropped \`duplicate-conflicting\`): the upstream gave two answers for one coin; the first in payload order is used`,
      );
  }
  const unknown = Object.entries(ledger?.unknownTopics ?? {}).filter(([, n]) => n > 0);
  if (unknown.length)
    warnings.push(
      `on-chain ledger: logs with a topic no tracked family decodes were counted, not loaded: ${unknown.map(([k, n]) => `${k} ${n}`).join("; ")}`,
    );
  const sourceObservedAt = Object.fromEntries(sources.map((s) => [s.endpoint, s.newestObservedAt]));
  return {
    asOf: opts.asOf,
    asOfDay: utcDay(opts.asOf),
    captures,
    sources,
    readerDropped,
    readerProblems,
    skippedCaptures,
    warnings,
    sourceObservedAt,
    depegVerdictFiles,
  };
}
