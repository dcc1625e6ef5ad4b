import { z } from "zod";
import { parseJsonText } from "../file-formats.ts";
import { type HttpClient, UpstreamError } from "../http-client.ts";
import { isoDay, poolTvlOrDrop, RowCollector, toFiniteNumber } from "../parse-helpers.ts";
import type { Capture, Endpoint, ReaderOutput, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * DEX subgraphs in the Uniswap v3 schema (GraphQL over HTTP POST, e.g. The Graph gateway
 * `https://gateway.thegraph.com/api/<key>/subgraphs/id/<id>`; the base URL carries any key, so none
 * is built in). Query (DEX_SUBGRAPH_QUERY): the top pools by `totalValueLockedUSD` with `feeTier`,
 * `token0`/`token1` `{id, symbol}` and their newest `poolDayDatas {date, volumeUSD, tvlUSD}`. Answer
 * `{data: {pools: [...]}}`, or `{errors: [...]}` (thrown, naming the source). No recorded capture exists
 * and the default capture plan does not call it (it needs a configured gateway URL).
 */
export const DEX_SUBGRAPH_BASE_URL = "https://gateway.thegraph.com/api/";

/** Subgraph indexers read the DEX contracts: their own family (`dex-subgraph`). */
export const DEX_SUBGRAPH_LINEAGE: SourceLineage = { family: "dex-subgraph", derivedFrom: null };
export const DEX_SUBGRAPH_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "snapshot at observedAt; poolDayData.date is a 00:00 UTC day (Unix s)",
};

export const DEX_SUBGRAPH_QUERY = `{ pools(first: 500, orderBy: totalValueLockedUSD, orderDirection: desc) {
  id feeTier totalValueLockedUSD token0 { id symbol } token1 { id symbol }
  poolDayDatas(first: 1, orderBy: date, orderDirection: desc) { date volumeUSD tvlUSD } } }`;

/** One pool of `raw_dex_subgraph__pools` (one per pool and capture). */
const SubgraphRow = z.object({
  observed_at: z.number().int(),
  observed_day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  subgraph: z.string().min(1),
  chain: z.string().min(1),
  pool_address: z.string().min(1),
  fee_tier: z.number().int().nonnegative().nullable(),
  tvl_usd: z.number().nonnegative(),
  token0_address: z.string().min(1),
  token0_symbol: z.string().nullable(),
  token1_address: z.string().min(1),
  token1_symbol: z.string().nullable(),
  day_date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .nullable(),
  day_volume_usd: z.number().nonnegative().nullable(),
});

const SubgraphEnvelope = z.looseObject({ data: z.looseObject({ pools: z.array(z.unknown()) }) });
const Token = z.looseObject({ id: z.string().min(1), symbol: z.string().nullable().optional() });
const SubgraphPool = z.looseObject({
  id: z.string().min(1),
  feeTier: z.unknown().optional(),
  totalValueLockedUSD: z.unknown(),
  token0: Token,
  token1: Token,
  poolDayDatas: z.array(z.looseObject({ date: z.unknown(), volumeUSD: z.unknown() })).optional(),
});

/**
 * POST of DEX_SUBGRAPH_QUERY to the subgraph path (params `{subgraph, chain}`: the path under the
 * base URL and the registry chain id its pools live on), history mode dated by the capture's UTC day.
 * One row per pool; malformed pools are dropped and counted (`pool-invalid`, `tvl-invalid`,
 * `implausible-value`, `day-data-invalid`). A 24 h volume is kept only with its day (`day_date`).
 */
export const dexSubgraphPoolsEndpoint: Endpoint = {
  key: "dex-subgraph.pools",
  source: "dex-subgraph",
  lineage: DEX_SUBGRAPH_LINEAGE,
  time: DEX_SUBGRAPH_TIME,
  mode: "history",
  dateColumn: "observed_day",
  maxStalenessSec: 6 * 3600,
  payloadSchema: SubgraphEnvelope,
  rowSchema: SubgraphRow,
  table: {
    name: "raw_dex_subgraph__pools",
    columns: {
      observed_at: "BIGINT",
      observed_day: "VARCHAR",
      subgraph: "VARCHAR",
      chain: "VARCHAR",
      pool_address: "VARCHAR",
      fee_tier: "BIGINT",
      tvl_usd: "DOUBLE",
      token0_address: "VARCHAR",
      token0_symbol: "VARCHAR",
      token1_address: "VARCHAR",
      token1_symbol: "VARCHAR",
      day_date: "VARCHAR",
      day_volume_usd: "DOUBLE",
    },
  },
  toRows(payload: { data: { pools: unknown[] } }, capture: Capture, out?: RowSink) {
    const rc = new RowCollector(SubgraphRow, out);
    for (const item of payload.data.pools) {
      const p = SubgraphPool.safeParse(item);
      if (!p.success) {
        rc.drop("pool-invalid");
        continue;
      }
      const tvl = poolTvlOrDrop(p.data.totalValueLockedUSD, rc);
      if (tvl === undefined) continue;
      const fee = toFiniteNumber(p.data.feeTier);
      const day = p.data.poolDayDatas?.[0];
      const dayTs = day ? toFiniteNumber(day.date) : null;
      const vol = day ? toFiniteNumber(day.volumeUSD) : null;
      if (fee === undefined || dayTs === undefined || vol === undefined || (vol !== null && vol < 0)) {
        rc.drop("day-data-invalid");
        continue;
      }
      rc.add({
        observed_at: capture.observedAt,
        observed_day: isoDay(capture.observedAt),
        subgraph: capture.params.subgraph ?? "",
        chain: capture.params.chain ?? "",
        pool_address: p.data.id.toLowerCase(),
        fee_tier: fee,
        tvl_usd: tvl,
        token0_address: p.data.token0.id.toLowerCase(),
        token0_symbol: p.data.token0.symbol ?? null,
        token1_address: p.data.token1.id.toLowerCase(),
        token1_symbol: p.data.token1.symbol ?? null,
        day_date: dayTs === null ? null : isoDay(dayTs),
        day_volume_usd: dayTs === null ? null : vol,
      });
    }
    return rc.result();
  },
  fetchLive: (client, params) => fetchSubgraphPools(client, params.subgraph),
};

/**
 * POSTs DEX_SUBGRAPH_QUERY to `subgraph` (path under the base URL). Throws UpstreamError naming
 * `dex-subgraph` on a failed call, a non-JSON body, GraphQL `errors`, or a body without `data.pools`.
 */
export async function fetchSubgraphPools(client: HttpClient, subgraph: string): Promise<unknown> {
  const body = await client.postJson(subgraph, { query: DEX_SUBGRAPH_QUERY });
  const errors = (body as { errors?: { message?: string }[] } | null)?.errors;
  if (Array.isArray(errors) && errors.length) {
    throw new UpstreamError(
      `dex-subgraph: ${subgraph} answered GraphQL errors: ${errors
        .map((e) => e?.message ?? "?")
        .slice(0, 3)
        .join("; ")}`,
      "dex-subgraph",
    );
  }
  const env = SubgraphEnvelope.safeParse(body);
  if (!env.success) {
    const issue = env.error.issues[0];
    throw new UpstreamError(
      `dex-subgraph: ${subgraph} returned a payload that is not a pool list (${issue?.path.join(".") || "root"}: ${issue?.message ?? "invalid"})`,
      "dex-subgraph",
    );
  }
  return body;
}

/** Capture reader of a saved subgraph answer (JSON as returned; invalid JSON throws naming the position). */
export function readSubgraphPoolsJson(subgraph: string, chain: string) {
  return (text: string): ReaderOutput => ({
    captures: [{ params: { subgraph, chain }, payload: parseJsonText(text) }],
    dropped: {},
  });
}
