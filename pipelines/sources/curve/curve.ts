import { z } from "zod";
import { parseJsonText } from "../file-formats.ts";
import { type HttpClient, UpstreamError } from "../http-client.ts";
import { isoDay, poolTvlOrDrop, RowCollector, toFiniteNumber } from "../parse-helpers.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * Curve API (`GET https://api.curve.finance/v1/getPools/{chain}/{registry}`, e.g. `ethereum/main`,
 * `ethereum/factory-stable-ng`). Assumed wire format (the public API's JSON; not described in
 * shared/reference/upstreams.md): `{ success: true, data: { poolData: [pool] } }`, pool fields read:
 * `id`, `address`, `name`, `symbol`, `usdTotal` (pool TVL, USD), `amplificationCoefficient` (StableSwap A,
 * numeric string), `isMetaPool`, `coins: [{address, symbol, decimals, usdPrice, poolBalance}]`
 * (`poolBalance` raw base units as a string). Other fields are ignored. No recorded capture exists,
 * so a default build has no Curve rows; rows are loaded for later analytics (v1 of the DEX liquidity
 * score reads DefiLlama yields pools only).
 */
export const CURVE_BASE_URL = "https://api.curve.finance/";

/** The Curve API reports Curve's own contracts: its own upstream family. */
export const CURVE_LINEAGE: SourceLineage = { family: "curve", derivedFrom: null };
export const CURVE_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "snapshot at observedAt; observed_day = UTC day of observedAt",
};

/** One coin of one pool in `raw_curve__pools` (one row per pool coin and capture). */
const CurveRow = z.object({
  observed_at: z.number().int(),
  observed_day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  chain: z.string().min(1),
  registry: z.string().min(1),
  pool_address: z.string().min(1),
  pool_name: z.string().nullable(),
  tvl_usd: z.number().nonnegative(),
  amplification: z.number().nonnegative().nullable(),
  is_meta_pool: z.boolean().nullable(),
  coin_index: z.number().int().nonnegative(),
  coin_address: z.string().min(1),
  coin_symbol: z.string().nullable(),
  coin_decimals: z.number().int().nonnegative().nullable(),
  coin_usd_price: z.number().nonnegative().nullable(),
  coin_balance_raw: z.string().regex(/^\d+$/).nullable(),
});

const CurveEnvelope = z.looseObject({
  success: z.boolean().optional(),
  data: z.looseObject({ poolData: z.array(z.unknown()) }),
});
const CurvePool = z.looseObject({
  address: z.string().min(1),
  name: z.string().nullable().optional(),
  usdTotal: z.unknown(),
  amplificationCoefficient: z.unknown().optional(),
  isMetaPool: z.unknown().optional(),
  coins: z.array(z.unknown()),
});
const CurveCoin = z.looseObject({
  address: z.string().min(1),
  symbol: z.string().nullable().optional(),
  decimals: z.unknown().optional(),
  usdPrice: z.unknown().optional(),
  poolBalance: z.unknown().optional(),
});

/**
 * `getPools/{chain}/{registry}` (params `{chain, registry}`; `chain` is Curve's blockchain id, which
 * equals the registry chain id for the EVM chains Curve serves), history mode dated by the capture's
 * UTC day. One row per pool coin; a pool without an address, coins or a plausible `usdTotal` is
 * dropped (`pool-invalid`, `tvl-invalid`, `implausible-value`), a malformed coin costs itself
 * (`coin-invalid`, `coin-value-invalid`). Addresses are lower-cased.
 */
export const curvePoolsEndpoint: Endpoint = {
  key: "curve.pools",
  source: "curve",
  lineage: CURVE_LINEAGE,
  time: CURVE_TIME,
  mode: "history",
  dateColumn: "observed_day",
  maxStalenessSec: 6 * 3600,
  payloadSchema: CurveEnvelope,
  rowSchema: CurveRow,
  table: {
    name: "raw_curve__pools",
    columns: {
      observed_at: "BIGINT",
      observed_day: "VARCHAR",
      chain: "VARCHAR",
      registry: "VARCHAR",
      pool_address: "VARCHAR",
      pool_name: "VARCHAR",
      tvl_usd: "DOUBLE",
      amplification: "DOUBLE",
      is_meta_pool: "BOOLEAN",
      coin_index: "BIGINT",
      coin_address: "VARCHAR",
      coin_symbol: "VARCHAR",
      coin_decimals: "BIGINT",
      coin_usd_price: "DOUBLE",
      coin_balance_raw: "VARCHAR",
    },
  },
  toRows(payload: { data: { poolData: unknown[] } }, capture: Capture, out?: RowSink) {
    const rc = new RowCollector(CurveRow, out);
    const chain = (capture.params.chain ?? "").trim().toLowerCase();
    const registry = (capture.params.registry ?? "").trim().toLowerCase();
    for (const item of payload.data.poolData) {
      const p = CurvePool.safeParse(item);
      if (!p.success) {
        rc.drop("pool-invalid");
        continue;
      }
      const tvl = poolTvlOrDrop(p.data.usdTotal, rc);
      if (tvl === undefined) continue;
      const a = toFiniteNumber(p.data.amplificationCoefficient);
      p.data.coins.forEach((raw, i) => {
        const c = CurveCoin.safeParse(raw);
        if (!c.success) {
          rc.drop("coin-invalid");
          return;
        }
        const decimals = toFiniteNumber(c.data.decimals);
        const price = toFiniteNumber(c.data.usdPrice);
        const bal = c.data.poolBalance === undefined || c.data.poolBalance === null ? null : String(c.data.poolBalance);
        if (decimals === undefined || price === undefined || (bal !== null && !/^\d+$/.test(bal))) {
          rc.drop("coin-value-invalid");
          return;
        }
        rc.add({
          observed_at: capture.observedAt,
          observed_day: isoDay(capture.observedAt),
          chain,
          registry,
          pool_address: p.data.address.toLowerCase(),
          pool_name: p.data.name ?? null,
          tvl_usd: tvl,
          amplification: a === undefined ? null : a,
          is_meta_pool: typeof p.data.isMetaPool === "boolean" ? p.data.isMetaPool : null,
          coin_index: i,
          coin_address: c.data.address.toLowerCase(),
          coin_symbol: c.data.symbol ?? null,
          coin_decimals: decimals,
          coin_usd_price: price,
          coin_balance_raw: bal,
        });
      });
    }
    return rc.result();
  },
  fetchLive: (client, params) => fetchCurvePools(client, params.chain, params.registry),
};

/**
 * Fetches `v1/getPools/{chain}/{registry}`. Throws UpstreamError naming `curve` on a failed call, a
 * non-JSON body, `success: false`, or a body without `data.poolData`.
 */
export async function fetchCurvePools(client: HttpClient, chain: string, registry: string): Promise<unknown> {
  const path = `v1/getPools/${encodeURIComponent(chain)}/${encodeURIComponent(registry)}`;
  const body = await client.getJson(path);
  const env = CurveEnvelope.safeParse(body);
  if (!env.success || env.data.success === false) {
    const issue = env.success ? undefined : env.error.issues[0];
    throw new UpstreamError(
      `curve: ${path} returned a payload that is not a pool list (${issue ? `${issue.path.join(".") || "root"}: ${issue.message}` : "success: false"})`,
      "curve",
    );
  }
  return body;
}

/** Capture reader of a saved `getPools` answer (JSON as returned; invalid JSON throws naming the position). */
export function readCurvePoolsJson(chain: string, registry: string) {
  return (text: string): ReaderOutput => ({
    captures: [{ params: { chain, registry }, payload: parseJsonText(text) }],
    dropped: {},
  });
}
