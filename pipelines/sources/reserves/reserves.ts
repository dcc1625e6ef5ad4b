import { z } from "zod";
import { type HttpClient, UpstreamError } from "../http-client.ts";
import { RowCollector } from "../parse-helpers.ts";
import type { Capture, Endpoint, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * Live reserve compositions read from issuers' machine-readable reserve reports (`/api/stablecoin-reserves`
 * mode `live` / `live-stale`). One {@link ReserveAdapter} per coin names the issuer endpoint, how to read
 * it and how old a reading may be before it is `live-stale`. No live capture is recorded: a build from
 * the recorded captures has no live reading, and the route serves the registry's curated composition
 * (`fallback`) where it has one.
 */

/** One reserve component of a live reading: display name, USD value and share of the total (percent). */
export interface LiveReserveComponent {
  name: string;
  valueUsd: number;
  pct: number;
}

/** A live reading of one coin's reserves, normalised by its adapter. */
export interface LiveReserveReading {
  stablecoinId: string;
  /** Adapter key (`json-attestation`). */
  adapter: string;
  /** When the issuer says the composition holds (Unix s). */
  reportedAt: number;
  totalUsd: number;
  components: LiveReserveComponent[];
}

/**
 * A live reserves adapter: the issuer endpoint (`url`, absolute or relative to the `reserves` source's
 * base URL), its budget (`maxAgeSec`: a reading observed longer ago is `live-stale`) and a parser from the
 * issuer's payload to a normalised reading (throws UpstreamError on a payload it cannot read).
 */
export interface ReserveAdapter {
  key: string;
  stablecoinId: string;
  url: string;
  maxAgeSec: number;
  parse(payload: unknown, stablecoinId: string): LiveReserveReading;
}

/**
 * `json-attestation` — an issuer transparency endpoint answering JSON
 * `{ "reportedAt": ISO-8601 | Unix s, "assets": [{ "name": string, "valueUsd": number }] }`. ASSUMED
 * format (no issuer publishes exactly this; it is the shape this adapter accepts, documented so a mirror
 * or an issuer integration can serve it). Shares are each asset's value over the sum; non-positive
 * totals, a missing date or an unreadable asset reject the whole reading (never partial reserves).
 */
const AttestationPayload = z.object({
  reportedAt: z.union([z.string().min(1), z.number().int().positive()]),
  assets: z.array(z.object({ name: z.string().min(1), valueUsd: z.number().nonnegative() })).min(1),
});

export function parseJsonAttestation(payload: unknown, stablecoinId: string): LiveReserveReading {
  const p = AttestationPayload.safeParse(payload);
  if (!p.success) {
    const issue = p.error.issues[0];
    throw new UpstreamError(
      `reserves: ${stablecoinId} attestation payload unreadable (${issue?.path.join(".") || "root"}: ${issue?.message ?? "invalid"})`,
      "reserves",
    );
  }
  const reportedAt =
    typeof p.data.reportedAt === "number" ? p.data.reportedAt : Math.floor(Date.parse(p.data.reportedAt) / 1000);
  if (!Number.isFinite(reportedAt))
    throw new UpstreamError(`reserves: ${stablecoinId} attestation reportedAt unreadable`, "reserves");
  const totalUsd = p.data.assets.reduce((s, a) => s + a.valueUsd, 0);
  if (!(totalUsd > 0))
    throw new UpstreamError(`reserves: ${stablecoinId} attestation totals ${totalUsd} USD`, "reserves");
  return {
    stablecoinId,
    adapter: "json-attestation",
    reportedAt,
    totalUsd,
    components: p.data.assets.map((a) => ({
      name: a.name,
      valueUsd: a.valueUsd,
      pct: Math.round((a.valueUsd / totalUsd) * 1e8) / 1e6,
    })),
  };
}

/** A `json-attestation` adapter for one coin at `url` with budget `maxAgeSec` (default one day). */
export function jsonAttestationAdapter(stablecoinId: string, url: string, maxAgeSec = 86400): ReserveAdapter {
  return { key: "json-attestation", stablecoinId, url, maxAgeSec, parse: parseJsonAttestation };
}

/**
 * Adapters the live capture runs, by stablecoin id. Empty: no issuer endpoint in this shape is
 * configured yet (no live reading is invented); add `jsonAttestationAdapter(id, url)` entries here.
 */
export const RESERVE_ADAPTERS: ReserveAdapter[] = [];

/** Base URL of the `reserves` source (adapters usually give absolute URLs). */
export const RESERVES_BASE_URL = "https://localhost.invalid/";

/** Fetches and parses one adapter's reading through the source's client (timeout, retries, circuit breaker). */
export async function readLiveReserves(adapter: ReserveAdapter, client: HttpClient): Promise<LiveReserveReading> {
  return adapter.parse(await client.getJson(adapter.url), adapter.stablecoinId);
}

/** Each issuer is its own upstream family. */
export const RESERVES_LINEAGE: SourceLineage = { family: "reserves", derivedFrom: null };
export const RESERVES_TIME: SourceTime = {
  zone: "UTC",
  dailyBucket: "snapshot at observedAt; reportedAt as the issuer states it",
};

const ComponentRow = z.object({
  stablecoin_id: z.string().min(1),
  adapter: z.string().min(1),
  name: z.string().min(1),
  value_usd: z.number().nonnegative(),
  pct: z.number().min(0).max(100),
  total_usd: z.number().positive(),
  reported_at: z.number().int(),
  max_age_sec: z.number().int().positive(),
  observed_at: z.number().int(),
});

/**
 * `reserves.composition` (params `{ stablecoinId }`): one capture per adapter, snapshot mode (the newest
 * capture of each coin at or before as-of is its live reading). The payload is the adapter's normalised
 * reading (`LiveReserveReading` plus `maxAgeSec`), so captures of every adapter share one raw table,
 * one row per component. A component that fails the row schema drops alone (`invalid-<field>`).
 */
export const reserveCompositionEndpoint: Endpoint = {
  key: "reserves.composition",
  source: "reserves",
  lineage: RESERVES_LINEAGE,
  time: RESERVES_TIME,
  mode: "snapshot",
  maxStalenessSec: 7 * 86400,
  payloadSchema: z.looseObject({ stablecoinId: z.string(), components: z.array(z.unknown()) }),
  rowSchema: ComponentRow,
  table: {
    name: "raw_reserves__compositions",
    columns: {
      stablecoin_id: "VARCHAR",
      adapter: "VARCHAR",
      name: "VARCHAR",
      value_usd: "DOUBLE",
      pct: "DOUBLE",
      total_usd: "DOUBLE",
      reported_at: "BIGINT",
      max_age_sec: "BIGINT",
      observed_at: "BIGINT",
    },
  },
  toRows(payload: LiveReserveReading & { maxAgeSec?: number }, capture: Capture, out?: RowSink) {
    const rc = new RowCollector(ComponentRow, out);
    const rows = payload.components.map((c) => ({
      stablecoin_id: payload.stablecoinId,
      adapter: payload.adapter,
      name: c.name,
      value_usd: c.valueUsd,
      pct: c.pct,
      total_usd: payload.totalUsd,
      reported_at: payload.reportedAt,
      max_age_sec: payload.maxAgeSec,
      observed_at: capture.observedAt,
    }));
    for (const r of rows) rc.add(r);
    return rc.result();
  },
  async fetchLive(client, params) {
    const adapter = RESERVE_ADAPTERS.find((a) => a.stablecoinId === params.stablecoinId);
    if (!adapter) throw new UpstreamError(`reserves: no adapter for ${params.stablecoinId}`, "reserves");
    return { ...(await readLiveReserves(adapter, client)), maxAgeSec: adapter.maxAgeSec };
  },
};
