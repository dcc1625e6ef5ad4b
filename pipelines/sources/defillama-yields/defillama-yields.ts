import { z } from "zod";
import { readCsvRows, ReaderDrops } from "../file-formats.ts";
import { type HttpClient, UpstreamError } from "../http-client.ts";
import { IMPLAUSIBLE_VALUE, isoDay, RowCollector, toFiniteNumber, toPlausibleAmount } from "../parse-helpers.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * DefiLlama yields (`GET https://yields.llama.fi/pools`, shared/reference/upstreams.md §2): every pool
 * DefiLlama tracks, `{status: "success", data: [pool]}`. Pool fields read: `pool` (UUID), `chain`
 * (display label, `Ethereum`), `project` (slug, `aave-v3`), `symbol` (`-`-joined for multi-asset pools),
 * `tvlUsd` (USD), `apy`/`apyBase`/`apyReward` and `apyPct1D/7D/30D` (**percent**, nullable),
 * `stablecoin` (DefiLlama's symbol heuristic), `ilRisk` (`yes`/`no`), `exposure` (`single`/`multi`),
 * `poolMeta`, `outlier`, `underlyingTokens` / `rewardTokens` (token addresses, nullable),
 * `volumeUsd1d` / `volumeUsd7d` (USD, nullable: most lending pools have none). Other fields are ignored.
 * The host differs from the stablecoins API, so it has its own circuit (`defillama-yields`); the
 * numbers are DefiLlama's (lineage family `defillama`).
 */
export const DEFILLAMA_YIELDS_BASE_URL = "https://yields.llama.fi/";

/** DefiLlama's yields server is a primary observation of the DefiLlama family. */
export const DEFILLAMA_YIELDS_LINEAGE: SourceLineage = { family: "defillama", derivedFrom: null };

/** A `/pools` answer is a snapshot at its observation time (UTC); rows are bucketed by the UTC day of that time. */
export const DEFILLAMA_YIELDS_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "snapshot at observedAt; observed_day = UTC day of observedAt",
};

const nullableNum = z.number().nullable();

/** One pool row of `raw_defillama__yield_pools` (one per pool and capture). */
const PoolRow = z.object({
  observed_at: z.number().int(),
  observed_day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  pool_id: z.string().min(1).max(200),
  project: z.string().min(1).max(200),
  chain_label: z.string().min(1).max(100),
  symbol: z.string().min(1).max(200),
  tvl_usd: z.number().nonnegative(),
  apy: nullableNum,
  apy_base: nullableNum,
  apy_reward: nullableNum,
  apy_pct_1d: nullableNum,
  apy_pct_7d: nullableNum,
  apy_pct_30d: nullableNum,
  is_stablecoin: z.boolean(),
  il_risk: z.string().nullable(),
  exposure: z.string().nullable(),
  pool_meta: z.string().nullable(),
  outlier: z.boolean().nullable(),
  underlying_tokens_json: z.string().nullable(),
  reward_tokens_json: z.string().nullable(),
  volume_usd_1d: z.number().nonnegative().nullable(),
  volume_usd_7d: z.number().nonnegative().nullable(),
});

/** Envelope of `/pools`: the pool list only (a bad pool costs one row, never the capture). */
const PoolsEnvelope = z.looseObject({ status: z.string().optional(), data: z.array(z.unknown()) });

const PoolItem = z.looseObject({
  pool: z.unknown(),
  chain: z.unknown(),
  project: z.unknown(),
  symbol: z.unknown(),
  tvlUsd: z.unknown(),
});

const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);

/** `true`/`false` (booleans or their text) → boolean; null/empty → null; anything else → undefined (malformed). */
function toBool(v: unknown): boolean | null | undefined {
  if (v === null || v === undefined || v === "") return null;
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "True" || v === "TRUE") return true;
  if (v === "false" || v === "False" || v === "FALSE") return false;
  return undefined;
}

/** A token address list → JSON text of the trimmed non-empty strings (null when absent/empty); undefined when malformed. */
function tokenList(v: unknown): string | null | undefined {
  if (v === null || v === undefined) return null;
  if (!Array.isArray(v) || v.some((t) => typeof t !== "string")) return undefined;
  const list = (v as string[]).map((t) => t.trim()).filter(Boolean);
  return list.length ? JSON.stringify(list) : null;
}

const APY_FIELDS = [
  ["apy", "apy"],
  ["apyBase", "apy_base"],
  ["apyReward", "apy_reward"],
  ["apyPct1D", "apy_pct_1d"],
  ["apyPct7D", "apy_pct_7d"],
  ["apyPct30D", "apy_pct_30d"],
] as const;

/**
 * `GET /pools` (no params) — history mode: every capture contributes its pools dated by the UTC day
 * of its observation (`observed_day`); staging keeps captures observed at or before as-of and the
 * marts take the newest (`yield_pools`) or the newest per UTC day (history). One row per pool; a
 * pool is dropped and counted by reason when its id, chain, project or symbol is missing
 * (`pool-id-missing`, `chain-missing`, `project-missing`, `symbol-missing`), its TVL is missing,
 * negative or malformed (`tvl-missing`, `tvl-invalid`, `implausible-value` above $10 T), an APY or
 * volume field is malformed (`apy-invalid`, `volume-invalid`), a flag is not a boolean
 * (`stablecoin-flag-invalid`, `outlier-flag-invalid`), a token list is not a list of strings
 * (`underlying-tokens-invalid`, `reward-tokens-invalid`), or it repeats a pool id of the same
 * capture (`duplicate-pool`). Empty APY values stay null (never 0). Stablecoin ids are joined later
 * (analytic `pool_coin_matches`), never here.
 */
export const yieldPoolsEndpoint: Endpoint = {
  key: "defillama-yields.pools",
  source: "defillama-yields",
  lineage: DEFILLAMA_YIELDS_LINEAGE,
  time: DEFILLAMA_YIELDS_TIME,
  mode: "history",
  dateColumn: "observed_day",
  maxStalenessSec: 6 * 3600,
  payloadSchema: PoolsEnvelope,
  rowSchema: PoolRow,
  table: {
    name: "raw_defillama__yield_pools",
    columns: {
      observed_at: "BIGINT",
      observed_day: "VARCHAR",
      pool_id: "VARCHAR",
      project: "VARCHAR",
      chain_label: "VARCHAR",
      symbol: "VARCHAR",
      tvl_usd: "DOUBLE",
      apy: "DOUBLE",
      apy_base: "DOUBLE",
      apy_reward: "DOUBLE",
      apy_pct_1d: "DOUBLE",
      apy_pct_7d: "DOUBLE",
      apy_pct_30d: "DOUBLE",
      is_stablecoin: "BOOLEAN",
      il_risk: "VARCHAR",
      exposure: "VARCHAR",
      pool_meta: "VARCHAR",
      outlier: "BOOLEAN",
      underlying_tokens_json: "VARCHAR",
      reward_tokens_json: "VARCHAR",
      volume_usd_1d: "DOUBLE",
      volume_usd_7d: "DOUBLE",
    },
  },
  toRows(payload: { data: unknown[] }, capture: Capture, out?: RowSink) {
    const rc = new RowCollector(PoolRow, out);
    const seen = new Set<string>();
    for (const item of payload.data) {
      const p = PoolItem.safeParse(item);
      if (!p.success || typeof item !== "object" || item === null || Array.isArray(item)) {
        rc.drop("pool-invalid");
        continue;
      }
      const o = p.data as Record<string, unknown>;
      const poolId = text(o.pool);
      if (!poolId) {
        rc.drop("pool-id-missing");
        continue;
      }
      const chain = text(o.chain);
      if (!chain) {
        rc.drop("chain-missing");
        continue;
      }
      const project = text(o.project);
      if (!project) {
        rc.drop("project-missing");
        continue;
      }
      const symbol = text(o.symbol);
      if (!symbol) {
        rc.drop("symbol-missing");
        continue;
      }
      const tvl = toPlausibleAmount(o.tvlUsd);
      if (tvl === null) {
        rc.drop("tvl-missing");
        continue;
      }
      if (tvl === "implausible") {
        rc.drop(IMPLAUSIBLE_VALUE);
        continue;
      }
      if (tvl === "malformed" || tvl < 0) {
        rc.drop("tvl-invalid");
        continue;
      }
      const apys: Record<string, number | null> = {};
      let bad = false;
      for (const [inKey, outKey] of APY_FIELDS) {
        const n = toFiniteNumber(o[inKey]);
        if (n === undefined) {
          bad = true;
          break;
        }
        apys[outKey] = n;
      }
      if (bad) {
        rc.drop("apy-invalid");
        continue;
      }
      const vol1d = toFiniteNumber(o.volumeUsd1d);
      const vol7d = toFiniteNumber(o.volumeUsd7d);
      if (vol1d === undefined || vol7d === undefined || (vol1d ?? 0) < 0 || (vol7d ?? 0) < 0) {
        rc.drop("volume-invalid");
        continue;
      }
      const stable = toBool(o.stablecoin);
      if (stable === undefined) {
        rc.drop("stablecoin-flag-invalid");
        continue;
      }
      const outlier = toBool(o.outlier);
      if (outlier === undefined) {
        rc.drop("outlier-flag-invalid");
        continue;
      }
      const underlying = tokenList(o.underlyingTokens);
      if (underlying === undefined) {
        rc.drop("underlying-tokens-invalid");
        continue;
      }
      const rewards = tokenList(o.rewardTokens);
      if (rewards === undefined) {
        rc.drop("reward-tokens-invalid");
        continue;
      }
      if (seen.has(poolId)) {
        rc.drop("duplicate-pool");
        continue;
      }
      seen.add(poolId);
      rc.add({
        observed_at: capture.observedAt,
        observed_day: isoDay(capture.observedAt),
        pool_id: poolId,
        project,
        chain_label: chain,
        symbol,
        tvl_usd: tvl,
        ...apys,
        is_stablecoin: stable ?? false,
        il_risk: text(o.ilRisk),
        exposure: text(o.exposure),
        pool_meta: text(o.poolMeta),
        outlier,
        underlying_tokens_json: underlying,
        reward_tokens_json: rewards,
        volume_usd_1d: vol1d,
        volume_usd_7d: vol7d,
      });
    }
    return rc.result();
  },
  fetchLive: (client) => fetchYieldPools(client),
};

/**
 * Fetches `/pools` through the source's client (timeout, retries on 429/5xx, circuit breaker).
 * Throws UpstreamError naming `defillama-yields` on a failed call, a non-JSON body, or a body that is
 * not `{ data: [...] }` (or whose `status` is not `success`).
 */
export async function fetchYieldPools(client: HttpClient): Promise<unknown> {
  const body = await client.getJson("pools");
  const env = PoolsEnvelope.safeParse(body);
  if (!env.success) {
    const issue = env.error.issues[0];
    throw new UpstreamError(
      `defillama-yields: pools returned a payload that is not a pool list (${issue?.path.join(".") || "root"}: ${issue?.message ?? "invalid"})`,
      "defillama-yields",
    );
  }
  if (env.data.status !== undefined && env.data.status !== "success") {
    throw new UpstreamError(
      `defillama-yields: pools answered status ${JSON.stringify(env.data.status)}`,
      "defillama-yields",
    );
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// Recorded-file reader: ConorsCode/open-defi-data `yields.csv` (a flattened daily `/pools` snapshot).

/**
 * Reader of the open-defi-data yields CSV (header `poolId,project,chain,symbol,tvlUsd,apy,apyBase,
 * apyReward,apyPct1D,apyPct7D,stablecoin,ilRisk,exposure,poolMeta,outlier,scrapedAt`) into the `/pools`
 * payload (`{status: "success", data: [pool]}`, values as text; the endpoint parser validates them).
 * The file carries no token addresses and no volumes (those fields stay absent → null). Every row's
 * `scrapedAt` (ISO-8601, UTC) must be the file's declared observation `observedAt` (Unix s, to the
 * second), else the row is skipped: `scraped-at-invalid` (unparsable) or `scraped-at-mismatch`
 * (another scrape mixed into the file). CSV parse errors are `csv-parse-error`.
 */
export function readOpenDefiYieldsCsv(observedAt: number) {
  return (textIn: string): ReaderOutput => {
    const drops = new ReaderDrops();
    const data: Record<string, unknown>[] = [];
    for (const r of readCsvRows(textIn, drops)) {
      const t = Date.parse(r.scrapedAt ?? "");
      if (!Number.isFinite(t)) {
        drops.drop("scraped-at-invalid");
        continue;
      }
      if (Math.floor(t / 1000) !== observedAt) {
        drops.drop("scraped-at-mismatch");
        continue;
      }
      data.push({
        pool: r.poolId,
        chain: r.chain,
        project: r.project,
        symbol: r.symbol,
        tvlUsd: r.tvlUsd,
        apy: r.apy,
        apyBase: r.apyBase,
        apyReward: r.apyReward,
        apyPct1D: r.apyPct1D,
        apyPct7D: r.apyPct7D,
        stablecoin: r.stablecoin,
        ilRisk: r.ilRisk,
        exposure: r.exposure,
        poolMeta: r.poolMeta,
        outlier: r.outlier,
      });
    }
    return drops.output([{ params: {}, payload: { status: "success", data } }]);
  };
}

/** The open-defi-data scrape's time labels: ISO-8601 instants in UTC (`scrapedAt`). */
export const OPEN_DEFI_YIELDS_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "snapshot at scrapedAt (UTC); observed_day = its UTC day",
};
