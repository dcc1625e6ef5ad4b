import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { getRequestListener } from "@hono/node-server";
import pg from "pg";
import { createApp } from "../../api/app.ts";
import { KeyStore, openSqlClient, type SqlClient } from "../../api/lib/key-store.ts";
import { fsReader, PublishedStore } from "../../api/lib/published.ts";
import { KeyRateLimiter } from "../../api/lib/rate-limit.ts";
import { configKey, decimalString } from "../../pipelines/onchain/contract.ts";
import { explorerUrls } from "../../pipelines/onchain/explorers.ts";
import { encodeKeyset } from "../../api/lib/cursor.ts";
import {
  type BlacklistEvent,
  type BlacklistLedger,
  blacklistLedgerArtifact,
  FREEZE_METHODOLOGY,
} from "../../site-data/blacklist.ts";
import { BLACKLIST_PAGES, encodeBlacklistPages } from "../../site-data/blacklist-pages.ts";
import {
  type BuildManifest,
  BuildManifestSchema,
  LatestPointerSchema,
  MANIFEST_SCHEMA_VERSION,
} from "../../site-data/manifest.ts";
import { prng } from "../../test/helpers/prng.ts";
import { must } from "../../lib/must.ts";

/**
 * `/api/blacklist` latency benchmark: a SYNTHETIC published build holding a freeze ledger of `rows`
 * events (serving layout only, in a temp dir, never published as data), served by the real app
 * (`createApp`: key auth, rate limit, validation, response cache, handler) in-process through
 * `app.request`, in fresh serving processes, with cursor walks of every sort order and filters.
 * CLI: `tsx scripts/bench/blacklist-latency.ts [--rows N] [--runs R] [--max-pages P] [--deep-pages D] [--keep-dir DIR]`
 * (`--keep-dir`: write the synthetic build there and keep it; `--serve DIR` runs one serving process over it;
 * `BLACKLIST_BENCH_SERVER_ARGS="--trace-gc"` passes node flags to the serving processes).
 */

/** Shared test/bench Postgres (trust auth); `BENCH_PG_URL` overrides it, as in scripts/bench.ts. */
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
/** Target of the endpoint: p99 per page (ms). */
const TARGET_P99_MS = 50;
/** Seed of the synthetic ledger (same rows on every run). */
const SEED = 0x0b1ac7;
/** As-of of the synthetic build (2025-09-07T00:00:00Z, Unix s); events end a week earlier. */
const AS_OF = Date.UTC(2025, 8, 7) / 1000;
const EVENTS_FROM = Date.UTC(2017, 0, 1) / 1000;
const EVENTS_TO = Date.UTC(2025, 8, 1) / 1000;
/** Events at or after this time come from the live ledger, older ones from recorded archives. */
const LIVE_FROM = Date.UTC(2024, 5, 1) / 1000;

const SORTS = ["date", "stablecoin", "chain", "event"] as const;
type SortBy = (typeof SORTS)[number];
type Direction = "asc" | "desc";

/** One walk of the benchmark: its query (without `limit`/`cursor`), rows and per-page latency (ms). */
export interface BlacklistWalkStats {
  query: string;
  rows: number;
  pages: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

// ---------------------------------------------------------------------------------------------
// Synthetic ledger

type Kind = BlacklistEvent["eventType"];
/** Freeze event families (signature, topic0 as in pipelines/registry/registry.json); `destroyHasAmount`: the destroy log carries the amount. */
const FAMILIES: Record<string, { events: Partial<Record<Kind, [string, string]>>; destroyHasAmount: boolean }> = {
  "tether-legacy-blacklist": {
    events: {
      blacklist: ["AddedBlackList(address)", "0x42e160154868087d6bfdc0ca23d96a1c1cfa32f1b72ba9ba27b69b98a0d819dc"],
      unblacklist: ["RemovedBlackList(address)", "0xd7e9ec6e6ecd65492dce6bf513cd6867560d49544421d0783ddf06e76c24470c"],
      destroy: [
        "DestroyedBlackFunds(address,uint256)",
        "0x61e6e66b0d6339b2980aecc6ccc0039736791f0ccde9ed512e789a7fbdd698c6",
      ],
    },
    destroyHasAmount: true,
  },
  "circle-blacklist": {
    events: {
      blacklist: ["Blacklisted(address)", "0xffa4e6181777692565cf28528fc88fd1516ea86b56da075235fa575af6a4b855"],
      unblacklist: ["UnBlacklisted(address)", "0x117e3210bb9aa7d9baff172026820255c6f6c30ba8999d1c2fd88e2848137c4e"],
    },
    destroyHasAmount: false,
  },
  "paxos-freeze": {
    events: {
      blacklist: ["AddressFrozen(address)", "0x90811a8edd3b3c17eeaefffc17f639cc69145d41a359c9843994dc2538203690"],
      unblacklist: ["AddressUnfrozen(address)", "0xc3776b472ebf54114339eec9e4dc924e7ce307a97f5c1ee72b6d474e6e5e8b7c"],
      destroy: ["FrozenAddressWiped(address)", "0xfc5960f1c5a5d2b60f031bf534af053b1bf7d9881989afaeb8b1d164db23aede"],
    },
    destroyHasAmount: false,
  },
  "paxos-pyusd-freeze": {
    events: {
      blacklist: ["FreezeAddress(address)", "0x1aa660498c83ea285bc55e4cfc00afcaa7120798db87b74f3c0d7c6e001bc392"],
      unblacklist: ["UnfreezeAddress(address)", "0x150465b020dfc06a59269da94ed66db9b65a516cf4fdd5f583b0f12752339bbe"],
      destroy: ["FrozenAddressWiped(address)", "0xfc5960f1c5a5d2b60f031bf534af053b1bf7d9881989afaeb8b1d164db23aede"],
    },
    destroyHasAmount: false,
  },
  "added-removed-blacklist": {
    events: {
      blacklist: ["AddedBlacklist(address)", "0x86c048150dfc5def3c35f7bc81582956dd964e56d8c028c9f4f5e978bb203c31"],
      unblacklist: ["RemovedBlacklist(address)", "0x90792cb7177eb70be35a14e39400d4143370da97f528237fd2b069e408ca68fb"],
    },
    destroyHasAmount: false,
  },
};

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;
/** Registry chains of the ledger: display name, launch (Unix s) and block time (s) for plausible block numbers. */
const CHAINS = [
  { id: "ethereum", name: "Ethereum", launch: day("2015-07-30"), blockSec: 13 },
  { id: "tron", name: "Tron", launch: day("2018-06-25"), blockSec: 3 },
  { id: "arbitrum", name: "Arbitrum", launch: day("2021-08-31"), blockSec: 0.26 },
  { id: "base", name: "Base", launch: day("2023-08-09"), blockSec: 2 },
  { id: "bsc", name: "BSC", launch: day("2020-08-29"), blockSec: 3 },
  { id: "polygon", name: "Polygon", launch: day("2020-05-30"), blockSec: 2.1 },
  { id: "optimism", name: "OP Mainnet", launch: day("2021-11-11"), blockSec: 2 },
  { id: "avalanche", name: "Avalanche", launch: day("2020-09-23"), blockSec: 2 },
];
const CHAIN = new Map(CHAINS.map((c) => [c.id, c]));
/** A chain of CHAINS by id (the coins below name only those). */
const chainOf = (id: string) => must(CHAIN.get(id), `bench chain ${id}`);

/** Gold price (USD/oz) by year, for PAXG/XAUT USD at event. */
const GOLD_USD: Record<number, number> = {
  2017: 1257,
  2018: 1268,
  2019: 1393,
  2020: 1770,
  2021: 1799,
  2022: 1800,
  2023: 1943,
  2024: 2388,
  2025: 3150,
};
/** Tracked coins: weight (share of events), freeze family, launch and chains with a relative weight each. */
const COINS = [
  {
    symbol: "USDT",
    id: "usdt-tether",
    decimals: 6,
    family: "tether-legacy-blacklist",
    weight: 44,
    since: day("2017-01-01"),
    usd: 1,
    chains: { ethereum: 4, tron: 5, arbitrum: 1, polygon: 1, optimism: 0.5, avalanche: 0.5 },
  },
  {
    symbol: "USDC",
    id: "usdc-circle",
    decimals: 6,
    family: "circle-blacklist",
    weight: 28,
    since: day("2018-09-26"),
    usd: 1,
    chains: { ethereum: 5, arbitrum: 1, base: 1.5, polygon: 1, optimism: 0.5, avalanche: 0.5 },
  },
  {
    symbol: "TUSD",
    id: "tusd-techteryx",
    decimals: 18,
    family: "added-removed-blacklist",
    weight: 5,
    since: day("2018-03-06"),
    usd: 1,
    chains: { ethereum: 3, tron: 2, bsc: 1, avalanche: 0.3 },
  },
  {
    symbol: "BUSD",
    id: "busd-paxos",
    decimals: 18,
    family: "paxos-freeze",
    weight: 4,
    since: day("2019-09-10"),
    usd: 1,
    chains: { ethereum: 3, bsc: 2 },
  },
  {
    symbol: "FDUSD",
    id: "fdusd-first-digital",
    decimals: 18,
    family: "added-removed-blacklist",
    weight: 4,
    since: day("2023-06-01"),
    usd: 1,
    chains: { ethereum: 1, bsc: 3 },
  },
  {
    symbol: "PAXG",
    id: "paxg-paxos",
    decimals: 18,
    family: "paxos-freeze",
    weight: 3,
    since: day("2019-09-05"),
    usd: null,
    chains: { ethereum: 1 },
  },
  {
    symbol: "USDP",
    id: "usdp-paxos",
    decimals: 18,
    family: "paxos-freeze",
    weight: 3,
    since: day("2018-09-10"),
    usd: 1,
    chains: { ethereum: 1 },
  },
  {
    symbol: "PYUSD",
    id: "pyusd-paypal",
    decimals: 6,
    family: "paxos-pyusd-freeze",
    weight: 3,
    since: day("2023-08-07"),
    usd: 1,
    chains: { ethereum: 3, arbitrum: 1 },
  },
  {
    symbol: "EURC",
    id: "eurc-circle",
    decimals: 6,
    family: "circle-blacklist",
    weight: 3,
    since: day("2022-06-30"),
    usd: 1.08,
    chains: { ethereum: 2, base: 1, avalanche: 0.5 },
  },
  {
    symbol: "XAUT",
    id: "xaut-tether",
    decimals: 6,
    family: "tether-legacy-blacklist",
    weight: 3,
    since: day("2020-01-23"),
    usd: null,
    chains: { ethereum: 3, tron: 1 },
  },
];
type Coin = (typeof COINS)[number];

interface Config {
  coin: Coin;
  chainId: string;
  chainName: string;
  contract: string;
  configKey: string;
  from: number;
  weight: number;
}
interface OpenFreeze {
  id: string;
  ts: number;
  address: string;
  raw: string | null;
}

/**
 * Generates `rows` freeze events deterministically (seeded): 10 coins on 8 chains (25 contracts),
 * transactions spread over 2017-01-01 … 2025-09-01 (denser towards the end; none before a chain's or
 * coin's launch), ~10% of them batches of 2–12 logs sharing hash, block and time. Types are assigned
 * in time order per contract: a blacklist opens a freeze, an unblacklist or destroy closes a random
 * open one of the same contract (destroys link to it with the time frozen; only families with a
 * destroy event). Amounts are exact base-unit strings (`amountRaw`, with `amountNative` its decimal
 * value), null for ~7% of balance-read rows. Returns the ledger newest first (`timestamp` desc, `id`
 * desc) and the newest event time (Unix s).
 */
function syntheticLedger(rows: number): { ledger: BlacklistLedger; newest: number } {
  const rnd = prng(SEED);
  const hex = (n: number) => {
    let s = "";
    while (s.length < n)
      s += Math.floor(rnd() * 4294967296)
        .toString(16)
        .padStart(8, "0");
    return s.slice(0, n);
  };
  const digits = (n: number) => {
    let s = "";
    while (s.length < n)
      s += Math.floor(rnd() * 1e9)
        .toString()
        .padStart(9, "0");
    return s.slice(0, n);
  };
  const configs: Config[] = [];
  for (const coin of COINS) {
    const shares = Object.entries(coin.chains);
    const sum = shares.reduce((s, [, w]) => s + w, 0);
    for (const [chainId, w] of shares) {
      const chain = chainOf(chainId);
      const contract = `0x${hex(40)}`;
      configs.push({
        coin,
        chainId,
        chainName: chain.name,
        contract,
        configKey: configKey(coin.id, chainId, contract, coin.family),
        from: Math.max(EVENTS_FROM, coin.since, chain.launch),
        weight: (coin.weight * w) / sum,
      });
    }
  }
  const totalWeight = configs.reduce((s, c) => s + c.weight, 0);
  const pickConfig = () => {
    let r = rnd() * totalWeight;
    for (const c of configs) {
      r -= c.weight;
      if (r < 0) return c;
    }
    return configs[configs.length - 1];
  };

  // Log slots: transactions (sometimes batches) on a contract at a time.
  const slots: { cfg: Config; ts: number; block: number; txHash: string; logIndex: number }[] = [];
  while (slots.length < rows) {
    const cfg = pickConfig();
    const ts = cfg.from + Math.floor((EVENTS_TO - cfg.from) * Math.sqrt(rnd()));
    const chain = chainOf(cfg.chainId);
    const block = 1 + Math.floor((ts - chain.launch) / chain.blockSec);
    const txHash = `0x${hex(64)}`;
    const batch = Math.min(rows - slots.length, rnd() < 0.1 ? 2 + Math.floor(rnd() * 11) : 1);
    const first = Math.floor(rnd() * 300);
    for (let k = 0; k < batch; k++) slots.push({ cfg, ts, block, txHash, logIndex: first + k });
  }
  slots.sort((a, b) => a.ts - b.ts || (a.txHash < b.txHash ? -1 : a.txHash > b.txHash ? 1 : a.logIndex - b.logIndex));

  const open = new Map<Config, OpenFreeze[]>();
  const addressPool: string[] = [];
  const amountTokens = (coin: Coin) => (coin.usd === null ? 10 ** (-2 + rnd() * 5.5) : 10 ** (rnd() * 7.5));
  const rawAmount = (coin: Coin) => {
    const whole = BigInt(Math.floor(amountTokens(coin)));
    const raw = whole * 10n ** BigInt(coin.decimals) + BigInt(`0${digits(coin.decimals)}`);
    return (raw === 0n ? 1n : raw).toString();
  };
  /** A balance read at block − 1: resolved for most rows, else an amount gap of some kind. */
  const balanceRead = (raw: string | null): Pick<BlacklistEvent, "amountRaw" | "amountSource" | "amountStatus"> => {
    const r = rnd();
    if (raw !== null && r < 0.93)
      return { amountRaw: raw, amountSource: "historical_balance", amountStatus: "resolved" };
    if (r < 0.965) return { amountRaw: null, amountSource: "unavailable", amountStatus: "recoverable_pending" };
    if (r < 0.985) return { amountRaw: null, amountSource: "unavailable", amountStatus: "provider_failed" };
    return { amountRaw: null, amountSource: "unavailable", amountStatus: "permanently_unavailable" };
  };
  const ids = new Set<string>();
  const events: BlacklistEvent[] = [];
  let newest = 0;
  for (const s of slots) {
    const { cfg, ts } = s;
    const coin = cfg.coin;
    const family = FAMILIES[coin.family];
    const opened = open.get(cfg) ?? [];
    open.set(cfg, opened);
    const r = rnd();
    let kind: Kind = "blacklist";
    if (opened.length && r >= 0.72) kind = r < 0.86 || !family.events.destroy ? "unblacklist" : "destroy";
    const id = `${cfg.chainId}-${s.txHash}-${s.logIndex}`;
    if (ids.has(id)) throw new Error(`synthetic ledger: duplicate id ${id}`);
    ids.add(id);
    let address: string;
    let amount: Pick<BlacklistEvent, "amountRaw" | "amountSource" | "amountStatus">;
    let linkedFreezeEventId: string | null = null;
    let frozenDurationSec: number | null = null;
    if (kind === "blacklist") {
      address =
        addressPool.length && rnd() < 0.1 ? addressPool[Math.floor(rnd() * addressPool.length)] : `0x${hex(40)}`;
      if (addressPool.length < 5000) addressPool.push(address);
      amount = balanceRead(rawAmount(coin));
      opened.push({ id, ts, address, raw: amount.amountRaw });
    } else {
      const at = Math.floor(rnd() * opened.length);
      const freeze = opened[at];
      opened[at] = opened[opened.length - 1];
      opened.pop();
      address = freeze.address;
      if (kind === "destroy") {
        linkedFreezeEventId = freeze.id;
        frozenDurationSec = ts - freeze.ts;
        amount = family.destroyHasAmount
          ? { amountRaw: freeze.raw ?? rawAmount(coin), amountSource: "event", amountStatus: "resolved" }
          : balanceRead(freeze.raw ?? rawAmount(coin));
      } else {
        amount = balanceRead(freeze.raw ?? rawAmount(coin));
      }
    }
    const [eventSignature, eventTopic0] = must(family.events[kind], `${kind} event of the family`);
    const native = amount.amountRaw === null ? null : Number(decimalString(amount.amountRaw, coin.decimals));
    const usdPerToken = coin.usd ?? GOLD_USD[new Date(ts * 1000).getUTCFullYear()];
    events.push({
      id,
      stablecoin: coin.symbol,
      stablecoinId: coin.id,
      chainId: cfg.chainId,
      chainName: cfg.chainName,
      eventType: kind,
      address,
      amountNative: native,
      amountRaw: amount.amountRaw,
      decimals: coin.decimals,
      amountUsdAtEvent: native === null ? null : Math.max(0.01, Math.round(native * usdPerToken * 100) / 100),
      amountSource: amount.amountSource,
      amountStatus: amount.amountStatus,
      txHash: s.txHash,
      blockNumber: s.block,
      logIndex: s.logIndex,
      timestamp: ts,
      methodologyVersion: FREEZE_METHODOLOGY,
      contractAddress: cfg.contract,
      configKey: cfg.configKey,
      eventSignature,
      eventTopic0,
      suppressionReason: null,
      ...explorerUrls(cfg.chainId, s.txHash, address),
      linkedFreezeEventId,
      frozenDurationSec,
      origin: ts >= LIVE_FROM ? "live" : "recorded",
    });
    if (ts > newest) newest = ts;
  }
  events.sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { ledger: { events, chains: CHAINS.map((c) => ({ id: c.id, name: c.name })) }, newest };
}

// ---------------------------------------------------------------------------------------------
// Published build

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
/** `YYYYMMDDTHHMMZ` of a Unix second (the stamp that starts a build id). */
const stamp = (sec: number) => `${new Date(sec * 1000).toISOString().replace(/[-:]/g, "").slice(0, 13)}Z`;

/**
 * Writes a published build into `root` as the API reads it: the serving layout of the ledger
 * (site-data/blacklist-pages.ts: `site-data/blacklist-pages/{events.jsonl,index.bin,addresses.bin}`,
 * encoded as the build's blacklist artifact does), `builds/<id>/manifest.json` (schema-checked; file
 * entries with artifact `blacklist`, sha256, bytes, rows, dataAsOf, schemaVersion and maxAgeSec 900;
 * wall clock) and `latest.json` last. The JSON ledger (`blacklist-events.json`) is left out: the route
 * does not read it, and at 1M rows its text would exceed V8's longest string. SYNTHETIC data: the
 * build lives in a temp dir and is never published. Returns the bytes of the three files.
 */
function writeBuild(
  root: string,
  ledger: BlacklistLedger,
  newest: number,
): { events: number; index: number; addresses: number } {
  const pages = encodeBlacklistPages(ledger.events, ledger.chains);
  const bodies = (Object.keys(BLACKLIST_PAGES) as (keyof typeof BLACKLIST_PAGES)[]).map((k) => ({
    path: BLACKLIST_PAGES[k],
    body: pages[k],
    sha: sha256(pages[k]),
  }));
  const contentHash = sha256(bodies.map((b) => `${b.path}:${b.sha}`).join("\n"));
  const buildId = `${stamp(AS_OF)}-${contentHash.slice(0, 7)}`;
  const manifest: BuildManifest = BuildManifestSchema.parse({
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    buildId,
    asOf: AS_OF,
    generatedAt: AS_OF,
    clock: "wall",
    contentHash,
    files: bodies.map((b) => ({
      path: b.path,
      sha256: b.sha,
      bytes: b.body.byteLength,
      rows: ledger.events.length,
      dataAsOf: newest,
      schemaVersion: blacklistLedgerArtifact.schemaVersion,
      artifact: blacklistLedgerArtifact.key,
      maxAgeSec: blacklistLedgerArtifact.maxAgeSec,
    })),
    sources: [],
    readerDropped: {},
    readerProblems: {},
    circuits: {},
    models: [{ name: "blacklist_events", rows: ledger.events.length }],
    qualityRejections: {},
    warnings: [],
    skippedCaptures: [],
    sourceLineage: [],
  } satisfies BuildManifest);
  const dir = join(root, "builds", buildId);
  for (const b of bodies) {
    mkdirSync(dirname(join(dir, b.path)), { recursive: true });
    writeFileSync(join(dir, b.path), b.body);
  }
  writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const pointer = LatestPointerSchema.parse({ buildId, asOf: AS_OF, manifest: `builds/${buildId}/manifest.json` });
  writeFileSync(join(root, "latest.json"), `${JSON.stringify(pointer)}\n`);
  return { events: pages.events.byteLength, index: pages.index.byteLength, addresses: pages.addresses.byteLength };
}

// ---------------------------------------------------------------------------------------------
// Key store

/**
 * A key store for the bench: Postgres at `BENCH_PG_URL` (default the shared test database) in a
 * throwaway schema, or in-memory PGlite when Postgres cannot be reached (its startup takes ~10 s).
 * `close()` closes the client and drops the schema.
 */
async function openBenchKeyStore(): Promise<{ keys: KeyStore; kind: "postgres" | "pglite"; close(): Promise<void> }> {
  const pepper = "bench-blacklist-pepper-0123456789abcdef";
  const schema = `ballast_bench_blacklist_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  let reachable = false;
  try {
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    reachable = true;
  } catch {
    await admin.end().catch(() => undefined);
  }
  let sql: SqlClient;
  if (reachable) {
    try {
      sql = await openSqlClient({
        databaseUrl: `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=-csearch_path%3D${schema}`,
        pgliteDir: "",
        queryTimeoutMs: 5000,
        connectTimeoutMs: 5000,
      });
    } catch (err) {
      await admin.query(`drop schema if exists ${schema} cascade`).finally(() => admin.end());
      throw err;
    }
  } else {
    sql = await openSqlClient({ pgliteDir: "memory://" });
  }
  const close = async () => {
    try {
      await sql.close();
    } finally {
      if (reachable) await admin.query(`drop schema if exists ${schema} cascade`).finally(() => admin.end());
    }
  };
  try {
    const keys = new KeyStore(sql, pepper, { verifyDeadlineMs: 5000 });
    await keys.init();
    return { keys, kind: reachable ? "postgres" : "pglite", close };
  } catch (err) {
    await close();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Bench

/**
 * Full garbage collection, so setup garbage is not collected during timed requests and heap figures
 * are live data. Uses `gc` when node runs with --expose-gc, else enables it.
 */
function collectGarbage(): void {
  try {
    let gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as () => void;
    }
    gc();
  } catch {
    // best effort: without it the first walk may pay for setup garbage
  }
}

const round = (x: number) => Math.round(x * 100) / 100;
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
/** Nearest-rank percentile (`p` in 0..1) of unsorted `xs` (ms). */
function percentile(xs: number[], p: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}
const median = (xs: number[]) => percentile(xs, 0.5);
const stats = (query: string, rows: number, lat: number[]): BlacklistWalkStats => ({
  query,
  rows,
  pages: lat.length,
  p50Ms: round(percentile(lat, 0.5)),
  p99Ms: round(percentile(lat, 0.99)),
  maxMs: round(Math.max(...lat)),
});

/** Sort key of `/api/blacklist` per `sortBy` (api/queries/blacklist.ts): time then id break ties. */
const SORT_KEY: Record<SortBy, (e: BlacklistEvent) => (string | number)[]> = {
  date: (e) => [e.timestamp, e.id],
  stablecoin: (e) => [e.stablecoin, e.timestamp, e.id],
  chain: (e) => [e.chainName, e.timestamp, e.id],
  event: (e) => [e.eventType, e.timestamp, e.id],
};
function compareKeys(a: (string | number)[], b: (string | number)[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/** Filtered walks: query string and the predicate giving their expected row count. */
const FILTERED: { query: string; sortBy: SortBy; direction: Direction; keep: (e: BlacklistEvent) => boolean }[] = [
  { query: "stablecoin=USDT", sortBy: "date", direction: "desc", keep: (e) => e.stablecoin === "USDT" },
  {
    query: "chainId=tron&eventType=destroy",
    sortBy: "date",
    direction: "desc",
    keep: (e) => e.chainId === "tron" && e.eventType === "destroy",
  },
  { query: "q=abc", sortBy: "date", direction: "desc", keep: (e) => e.address.includes("abc") },
  {
    query: "chain=Ethereum&sortBy=stablecoin&sortDirection=asc",
    sortBy: "stablecoin",
    direction: "asc",
    keep: (e) => e.chainId === "ethereum",
  },
];

/** What the serving processes check against: per walk the matching rows, per deep start the cursor and the row after it. */
interface Expectations {
  rows: number;
  pageSize: number;
  /** Pages walked per walk from its first page (null: every page). */
  maxPages: number | null;
  /** Pages walked from each deep start. */
  deepPages: number;
  walks: { query: string; sortBy: SortBy; direction: Direction; rows: number }[];
  deep: { query: string; sortBy: SortBy; direction: Direction; cursor: string; firstId: string; at: number }[];
}

/** One serving process's measures (ms, on the server: request arrival to last byte handed to the socket; memory in MB of 10^6 bytes). */
export interface BlacklistServeRun {
  pages: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** CPU time of the serving process (user + system, all its threads) while each page was served: p50 and p99; unlike wall time, barely moved by the machine's other work. */
  cpuP50Ms: number;
  cpuP99Ms: number;
  /** p99 of the same pages seen by the client (fetch until the body is read: adds loopback transport and the client's own GC). */
  clientP99Ms: number;
  /** p99 of the first page of every walk. */
  firstPageP99Ms: number;
  /** Median of 5 first pages with `includeTotal=true` (exact count over the whole ledger). */
  totalExactMs: number;
  /** The first-ever request of the process (cold build: manifest, index read, one row). */
  firstRequestMs: number;
  /** First request of each other sort key; not in p50/p99. */
  sortWarmupMs: Record<string, number>;
  walks: BlacklistWalkStats[];
  /** V8 heap used after a full GC: before the first request and after every walk (the ledger must not land there). */
  heapBeforeMB: number;
  heapAfterMB: number;
  /** Off-heap ArrayBuffers after the walks (the index, address blob and cached page reads live there). */
  arrayBuffersAfterMB: number;
  rssAfterMB: number;
  keyStore: "postgres" | "pglite";
}

/** Result of `benchBlacklistLatency`: medians over `runs` serving processes of one synthetic build, and each run. */
export interface BlacklistLatencyResult {
  rows: number;
  pageSize: number;
  runs: number;
  maxPagesPerWalk: number | null;
  deepPages: number;
  /** Walked orders and queries, every one checked (order, no repeats, counts; deep starts: the row after the cursor). */
  walks: string[];
  /** Medians over runs of each run's p50/p99/max page latency, first request, includeTotal, heap. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  cpuP50Ms: number;
  cpuP99Ms: number;
  firstRequestMs: number;
  totalExactMs: number;
  pages: number;
  heapBeforeMB: number;
  heapAfterMB: number;
  arrayBuffersAfterMB: number;
  rssAfterMB: number;
  targetP99Ms: number;
  targetFirstRequestMs: number;
  meetsTarget: boolean;
  /** Published layout sizes (bytes). */
  layoutBytes: { events: number; index: number; addresses: number };
  /** Generating and encoding the synthetic build (ms). */
  setupMs: number;
  /** /proc/loadavg (1, 5, 15 min) when the runs ended: the machine's other work. */
  loadAverage: number[];
  perRun: BlacklistServeRun[];
}

const TARGET_FIRST_REQUEST_MS = 200;

/**
 * Benchmarks `/api/blacklist` on a SYNTHETIC published build of `rows` freeze events (default 100,000;
 * `pageSize` default 1000, the route's maximum `limit`; never published as data: a temp dir removed
 * afterwards). Generates the ledger once, writes its serving layout, computes what each walk must
 * return, then runs `runs` (default 3) serving processes (`--serve <dir>`), each a fresh server that
 * has never seen the build, and reports medians over them.
 *
 * Request mix of each serving process (every URL once, so the response cache never answers): the
 * first-ever request (`limit=1`), the first request of each other sort, 20 offset pages (warm-up);
 * then cursor walks of every sort (`date`, `stablecoin`, `chain`, `event`) × (`asc`, `desc`) and four
 * filtered queries (`stablecoin=USDT`; `chainId=tron&eventType=destroy`; `q=abc`;
 * `chain=Ethereum&sortBy=stablecoin&sortDirection=asc`), each from its first page for `maxPagesPerWalk`
 * pages (default: every page), plus `deepPages` pages (default 10) from a cursor in the middle of each
 * of the 12 orders (cursors built from the sorted synthetic ledger); then `includeTotal=true` × 5.
 * Page latency is the server's: the app behind node:http on loopback in its own process, timed from a
 * request's arrival to its last byte handed to the socket (the client's parsing and checks stay out).
 *
 * @throws Error when a walk misses, repeats or misorders a row, a deep start does not continue after
 * its cursor's row, a total is wrong, or a request is not 200.
 */
export async function benchBlacklistLatency(
  opts: {
    rows?: number;
    pageSize?: number;
    runs?: number;
    maxPagesPerWalk?: number | null;
    deepPages?: number;
    keepDir?: string;
  } = {},
): Promise<BlacklistLatencyResult> {
  const rows = opts.rows ?? 100_000;
  const pageSize = opts.pageSize ?? 1000;
  const runs = opts.runs ?? 3;
  const deepPages = opts.deepPages ?? 10;
  const maxPages = opts.maxPagesPerWalk ?? null;
  if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`rows must be a positive integer (got ${rows})`);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
    throw new RangeError(`pageSize must be an integer from 1 to 1000 (got ${pageSize})`);
  const t0 = performance.now();
  const dir = opts.keepDir ?? mkdtempSync(join(tmpdir(), "ballast-bench-blacklist-"));
  if (opts.keepDir) mkdirSync(dir, { recursive: true });
  try {
    let layoutBytes: BlacklistLatencyResult["layoutBytes"];
    const expect: Expectations = { rows, pageSize, maxPages, deepPages, walks: [], deep: [] };
    {
      // Scoped so the generated ledger is collected before the serving processes start.
      const { ledger, newest } = syntheticLedger(rows);
      layoutBytes = writeBuild(join(dir, "store"), ledger, newest);
      const ev = ledger.events;
      // ascending order of each sort: date by (time, id), the others a stable sort of it by their prefix
      const byDate = ev
        .map((_, i) => i)
        .sort((a, b) => ev[a].timestamp - ev[b].timestamp || (ev[a].id < ev[b].id ? -1 : ev[a].id > ev[b].id ? 1 : 0));
      const ascending = (sortBy: SortBy) =>
        sortBy === "date"
          ? byDate
          : [...byDate].sort((a, b) => {
              const x = SORT_KEY[sortBy](ev[a])[0],
                y = SORT_KEY[sortBy](ev[b])[0];
              return x < y ? -1 : x > y ? 1 : 0;
            });
      const orders = new Map<SortBy, number[]>(SORTS.map((s) => [s, ascending(s)]));
      const plan = [
        ...SORTS.flatMap((s) =>
          (["asc", "desc"] as const).map((d) => ({
            query: `sortBy=${s}&sortDirection=${d}`,
            sortBy: s,
            direction: d,
            keep: (_: BlacklistEvent) => true,
          })),
        ),
        ...FILTERED,
      ];
      for (const w of plan) {
        const asc = must(orders.get(w.sortBy), `order by ${w.sortBy}`).filter((i) => w.keep(ev[i]));
        const seq = w.direction === "asc" ? asc : [...asc].reverse();
        expect.walks.push({ query: w.query, sortBy: w.sortBy, direction: w.direction, rows: seq.length });
        const at = Math.floor(seq.length / 2);
        if (at + 1 < seq.length) {
          expect.deep.push({
            query: w.query,
            sortBy: w.sortBy,
            direction: w.direction,
            at,
            cursor: encodeKeyset(`${w.sortBy}:${w.direction}`, SORT_KEY[w.sortBy](ev[seq[at]])),
            firstId: ev[seq[at + 1]].id,
          });
        }
      }
    }
    writeFileSync(join(dir, "expect.json"), JSON.stringify(expect));
    const setupMs = Math.round(performance.now() - t0);

    const perRun: BlacklistServeRun[] = [];
    for (let k = 0; k < runs; k++) perRun.push(await serveRun(dir));
    const med = (f: (r: BlacklistServeRun) => number) => round(median(perRun.map(f)));
    const p99Ms = med((r) => r.p99Ms);
    const firstRequestMs = med((r) => r.firstRequestMs);
    return {
      rows,
      pageSize,
      runs,
      maxPagesPerWalk: maxPages,
      deepPages,
      walks: [...expect.walks.map((w) => w.query), ...expect.deep.map((d) => `${d.query} from row ${d.at}`)],
      p50Ms: med((r) => r.p50Ms),
      p99Ms,
      maxMs: med((r) => r.maxMs),
      cpuP50Ms: med((r) => r.cpuP50Ms),
      cpuP99Ms: med((r) => r.cpuP99Ms),
      firstRequestMs,
      totalExactMs: med((r) => r.totalExactMs),
      pages: perRun[0]?.pages ?? 0,
      heapBeforeMB: med((r) => r.heapBeforeMB),
      heapAfterMB: med((r) => r.heapAfterMB),
      arrayBuffersAfterMB: med((r) => r.arrayBuffersAfterMB),
      rssAfterMB: med((r) => r.rssAfterMB),
      targetP99Ms: TARGET_P99_MS,
      targetFirstRequestMs: TARGET_FIRST_REQUEST_MS,
      meetsTarget: p99Ms <= TARGET_P99_MS && firstRequestMs <= TARGET_FIRST_REQUEST_MS,
      layoutBytes,
      setupMs,
      loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
      perRun,
    };
  } finally {
    if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
  }
}

/** Messages between the bench (client) and its serving process. */
type ToServer = { cmd: "stats" } | { cmd: "exit" };
type FromServer =
  | { ready: true; port: number; token: string; keyStore: "postgres" | "pglite"; heapBeforeMB: number }
  | {
      stats: true;
      serverMs: Record<string, number>;
      cpuMs: Record<string, number>;
      heapAfterMB: number;
      arrayBuffersAfterMB: number;
      rssAfterMB: number;
    };

/**
 * The serving process (`--serve DIR`, forked by serveRun): the real app over the build in DIR behind
 * node:http on 127.0.0.1 (as api/server.ts serves it), timing each request on the server from its
 * arrival to the last byte handed to the socket (`finish`), so the client's own work (parsing 1 MB
 * pages, checks) never lands in a measured request. Answers `stats` with those times and its memory
 * after a full GC; exits on `exit`.
 */
async function serverProcess(dir: string): Promise<void> {
  const ks = await openBenchKeyStore();
  const { token } = await ks.keys.create(
    { name: "bench-blacklist", rateLimitPerMinute: 1_000_000 },
    { maxRateLimitPerMinute: 1_000_000 },
  );
  const app = createApp({
    store: new PublishedStore(fsReader(join(dir, "store")), 0),
    keys: ks.keys,
    limiter: new KeyRateLimiter(),
    corsOrigins: ["http://localhost"],
    clockMode: "wall",
  });
  const serverMs: Record<string, number> = {};
  const cpuMs: Record<string, number> = {};
  const server = createServer(getRequestListener(app.fetch));
  server.on("request", (req, res) => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    res.on("finish", () => {
      serverMs[req.url ?? ""] = round(performance.now() - start);
      const d = process.cpuUsage(cpu);
      cpuMs[req.url ?? ""] = round((d.user + d.system) / 1000);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const send = (m: FromServer) => {
    if (!process.send) throw new Error("blacklist-latency: the serving process runs with an IPC channel (fork)");
    process.send(m);
  };
  process.on("message", async (m: ToServer) => {
    if (m.cmd === "stats") {
      collectGarbage();
      const mem = process.memoryUsage();
      send({
        stats: true,
        serverMs,
        cpuMs,
        heapAfterMB: mb(mem.heapUsed),
        arrayBuffersAfterMB: mb(mem.arrayBuffers),
        rssAfterMB: mb(mem.rss),
      });
    } else {
      server.closeAllConnections();
      server.close();
      await ks.close();
      process.exit(0);
    }
  });
  collectGarbage();
  send({
    ready: true,
    port: (server.address() as AddressInfo).port,
    token,
    keyStore: ks.kind,
    heapBeforeMB: mb(process.memoryUsage().heapUsed),
  });
}

/**
 * One run: forks a fresh serving process over the build in `dir` (a server that has never seen the
 * build) and issues the request mix over HTTP on loopback, checking every page against `expect.json`.
 * Latencies are the server's (serverProcess); the client's own are kept for reference (`clientP99Ms`).
 */
async function serveRun(dir: string): Promise<BlacklistServeRun> {
  const expect = JSON.parse(readFileSync(join(dir, "expect.json"), "utf8")) as Expectations;
  const { pageSize } = expect;
  const child = fork(fileURLToPath(import.meta.url), ["--serve", dir], {
    execArgv: ["--import", "tsx", ...(process.env.BLACKLIST_BENCH_SERVER_ARGS?.split(" ").filter(Boolean) ?? [])],
    env: { ...process.env, BALLAST_LOG: "silent" },
    stdio: ["ignore", 2, "inherit", "ipc"],
  });
  const next = () =>
    new Promise<FromServer>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`serving process exited (${code})`));
      child.once("exit", onExit);
      child.once("message", (m) => {
        child.off("exit", onExit);
        resolve(m as FromServer);
      });
    });
  try {
    const ready = await next();
    if (!("ready" in ready)) throw new Error("serving process did not start");
    const base = `http://127.0.0.1:${ready.port}`;
    const requested = new Set<string>();
    const clientMs: number[] = [];
    // identity, as the issue's measurement: a compressed page adds the compression of ~1 MB (the gzip path is issue 21 item 7)
    const headers = { "X-API-Key": ready.token, "Accept-Encoding": "identity" };
    /** GET `path` once (a repeated URL throws: the response cache would answer it); the body parsed. */
    /** What the bench reads of a `/api/blacklist` answer. */
    type BlacklistPage = { events: BlacklistEvent[]; nextCursor: string | null; total?: number; totalExact?: boolean };
    const get = async (path: string): Promise<BlacklistPage> => {
      if (requested.has(path)) throw new Error(`bench requested ${path} twice: the response cache would answer it`);
      requested.add(path);
      const start = performance.now();
      const res = await fetch(base + path, { headers });
      const bytes = await res.arrayBuffer();
      clientMs.push(performance.now() - start);
      const body = JSON.parse(Buffer.from(bytes).toString("utf8"));
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(body)}`);
      return body;
    };

    const first = "/api/blacklist?limit=1";
    await get(first);
    const warm: Record<string, string> = {};
    for (const s of SORTS.filter((x) => x !== "date")) {
      warm[s] = `/api/blacklist?sortBy=${s}&limit=1`;
      await get(warm[s]);
    }
    for (let k = 1; k <= 20; k++)
      await get(
        `/api/blacklist?limit=${pageSize}&offset=${Math.min(25_000, k * pageSize)}&sortDirection=${k % 2 ? "asc" : "desc"}`,
      );
    const warmClient = clientMs.length;

    /** Walks `pages` pages (null: all) of `query` by cursor from `cursor`; checks order and no repeats. Returns the URLs and rows. */
    const walk = async (
      query: string,
      sortBy: SortBy,
      direction: Direction,
      pages: number | null,
      cursor: string | null,
    ) => {
      const seen = new Set<string>();
      const urls: string[] = [];
      const key = SORT_KEY[sortBy];
      const sign = direction === "asc" ? 1 : -1;
      let prev: (string | number)[] | null = null;
      let firstId: string | null = null;
      let done = false;
      do {
        const url = `/api/blacklist?${query}&limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        urls.push(url);
        const body = await get(url);
        for (const e of body.events as BlacklistEvent[]) {
          if (seen.has(e.id)) throw new Error(`walk ${query}: row ${e.id} returned twice`);
          seen.add(e.id);
          firstId ??= e.id;
          const k = key(e);
          if (prev && sign * compareKeys(prev, k) >= 0)
            throw new Error(`walk ${query}: row ${e.id} out of ${sortBy} ${direction} order`);
          prev = k;
        }
        cursor = body.nextCursor;
        done = !cursor;
      } while (!done && (pages === null || urls.length < pages));
      return { urls, rows: seen.size, firstId, done };
    };

    const walked: { query: string; rows: number; urls: string[]; first: boolean }[] = [];
    for (const w of expect.walks) {
      const r = await walk(w.query, w.sortBy, w.direction, expect.maxPages, null);
      const want = r.done ? w.rows : Math.min(w.rows, r.urls.length * pageSize);
      if (r.rows !== want) throw new Error(`walk ${w.query}: ${r.rows} rows, expected ${want}`);
      walked.push({ query: w.query, rows: r.rows, urls: r.urls, first: true });
    }
    for (const d of expect.deep) {
      const r = await walk(d.query, d.sortBy, d.direction, expect.deepPages, d.cursor);
      if (r.firstId !== d.firstId)
        throw new Error(`deep walk ${d.query} from row ${d.at}: first row ${r.firstId}, expected ${d.firstId}`);
      walked.push({ query: `${d.query} from row ${d.at}`, rows: r.rows, urls: r.urls, first: false });
    }
    const clientWalkMs = clientMs.slice(warmClient);
    // Exact total on the first page: 5 equivalent but distinct URLs (raw parameters key the cache).
    const totals = ["", "&sortBy=date", "&sortDirection=desc", "&sortBy=date&sortDirection=desc", "&offset=0"].map(
      (v) => `/api/blacklist?includeTotal=true&limit=${pageSize}${v}`,
    );
    for (const url of totals) {
      const body = await get(url);
      if (body.total !== expect.rows || body.totalExact !== true)
        throw new Error(`includeTotal: total ${body.total} (exact ${body.totalExact}), expected ${expect.rows}`);
    }

    child.send({ cmd: "stats" } satisfies ToServer);
    const st = await next();
    if (!("stats" in st)) throw new Error("serving process sent no stats");
    const ms = (url: string) => {
      const v = st.serverMs[url];
      if (v === undefined) throw new Error(`no server time for ${url}`);
      return v;
    };
    const walks = walked.map((w) => stats(w.query, w.rows, w.urls.map(ms)));
    const pageLat = walked.flatMap((w) => w.urls.map(ms));
    const pageCpu = walked.flatMap((w) => w.urls.map((u) => st.cpuMs[u] ?? 0));
    return {
      pages: pageLat.length,
      p50Ms: round(percentile(pageLat, 0.5)),
      p99Ms: round(percentile(pageLat, 0.99)),
      maxMs: round(Math.max(...pageLat)),
      clientP99Ms: round(percentile(clientWalkMs, 0.99)),
      cpuP50Ms: round(percentile(pageCpu, 0.5)),
      cpuP99Ms: round(percentile(pageCpu, 0.99)),
      firstPageP99Ms: round(
        percentile(
          walked.filter((w) => w.first).map((w) => ms(w.urls[0])),
          0.99,
        ),
      ),
      totalExactMs: round(median(totals.map(ms))),
      firstRequestMs: ms(first),
      sortWarmupMs: Object.fromEntries(Object.entries(warm).map(([s, u]) => [s, ms(u)])),
      walks,
      heapBeforeMB: ready.heapBeforeMB,
      heapAfterMB: st.heapAfterMB,
      arrayBuffersAfterMB: st.arrayBuffersAfterMB,
      rssAfterMB: st.rssAfterMB,
      keyStore: ready.keyStore,
    };
  } finally {
    if (child.connected) child.send({ cmd: "exit" } satisfies ToServer);
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
  }
}

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const serve = arg("serve");
  const rows = arg("rows");
  const maxPages = arg("max-pages");
  const job: Promise<unknown> = serve
    ? serverProcess(serve)
    : benchBlacklistLatency({
        rows: rows === undefined ? undefined : Number(rows),
        runs: arg("runs") === undefined ? undefined : Number(arg("runs")),
        maxPagesPerWalk: maxPages === undefined ? undefined : Number(maxPages),
        deepPages: arg("deep-pages") === undefined ? undefined : Number(arg("deep-pages")),
        keepDir: arg("keep-dir"),
      });
  job.then(
    (r) => {
      if (!serve) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    },
    (err) => {
      process.stderr.write(`${err?.stack ?? err}\n`);
      process.exitCode = 1;
    },
  );
}
