import type { z } from "zod";
import type { ColumnType } from "./column-type.ts";
import type { EvmRpc } from "./evm-rpc.ts";
import type { HttpClient } from "./http-client.ts";

/** A raw table the load stage fills from validated rows: `raw_<source>__<entity>`. */
export interface RawTable {
  name: string;
  columns: Record<string, ColumnType>;
}

/**
 * What is known of one recorded or live observation of an upstream endpoint besides its payload:
 * when it was observed (Unix seconds) and where it came from. The load stage keeps these (for the
 * manifest) once the payload itself has been loaded and released.
 */
export interface CaptureInfo {
  endpoint: string;
  params: Record<string, string>;
  /** Unix seconds when the payload was observed upstream. */
  observedAt: number;
  origin: "recorded" | "live";
  /** Path the payload was read from (relative to the capture dir or storage root). */
  path: string;
  sha256: string;
}

/** One recorded or live observation of an upstream endpoint: its CaptureInfo and exactly what the upstream said (`payload`). */
export interface Capture extends CaptureInfo {
  payload: unknown;
}

/**
 * One problem a capture reader met in a recorded file: the 1-based physical line (of the row's
 * end, header included), a short code (`TooFewFields`, `MissingQuotes`, …) and the message.
 */
export interface ReaderProblem {
  line: number;
  code: string;
  message: string;
}

/**
 * What a capture reader yields from one recorded file: one upstream-shaped payload per endpoint
 * params, the count of skipped rows per reason (→ manifest `readerDropped[file]`), and the first
 * few problems with their line numbers.
 */
export interface ReaderOutput {
  captures: { params: Record<string, string>; payload: unknown }[];
  dropped: Record<string, number>;
  /** At most READER_PROBLEM_LIMIT problems, in file order. */
  problems?: ReaderProblem[];
}

/** Receives each validated row of a capture as its parser keeps it, in order (the load stage appends it to DuckDB). */
export type RowSink = (row: Record<string, unknown>) => void;

/**
 * Rows produced from one capture plus the count of rows dropped per reason. `rows` is empty when the
 * parser was given a RowSink: the kept rows went to it instead.
 */
export interface ParsedRows {
  rows: Record<string, unknown>[];
  dropped: Record<string, number>;
}

/**
 * How captures of an endpoint combine at build time:
 * `snapshot` — the newest capture observed at or before as-of is the current state;
 * `history` — every capture contributes dated rows; rows dated after as-of are ignored and the
 * newest capture wins on duplicate keys.
 */
export type CaptureMode = "snapshot" | "history";

/**
 * Where an endpoint's numbers come from. `family` is the independent upstream family whose
 * observations the numbers derive from (two sources of the same family are not independent
 * confirmation of each other); `derivedFrom` names the family a re-publisher copies, or null
 * when the endpoint is a primary observation of its family.
 */
export interface SourceLineage {
  family: string;
  derivedFrom: string | null;
}

/**
 * Time semantics of an endpoint's timestamps: `zone` is the IANA zone its labels are written in
 * (`UTC`, `America/New_York`, …); `dailyBucket` says how a row maps to a UTC day, e.g.
 * `"00:00 UTC point"` or `"America/New_York labels of 00:00 UTC points"`.
 */
export interface SourceTime {
  zone: string;
  dailyBucket: string;
}

/** One upstream endpoint: a live client call and a parser shared by live and recorded captures. */
export interface Endpoint {
  /** `<source>.<entity>`, e.g. `defillama.stablecoins`. */
  key: string;
  /** Circuit / host name. */
  source: string;
  /** Independent upstream family and what it re-publishes (see SourceLineage). */
  lineage: SourceLineage;
  /** Zone of the upstream's time labels and the daily-bucket rule (see SourceTime). */
  time: SourceTime;
  /**
   * Value of the `source` column in the rows this endpoint writes, when it differs from `source`
   * (e.g. `alchemy` archives). Absent: rows carry `source` (or no source column).
   */
  rowSource?: string;
  mode: CaptureMode;
  table: RawTable;
  /**
   * Upstream payload schema of the envelope only (top-level shape, arrays of `unknown`): a payload
   * failing it is rejected whole, so it must not look inside rows — one bad row must cost one row,
   * dropped and counted by `toRows`.
   */
  payloadSchema: z.ZodType;
  /**
   * Turns a validated payload into candidate rows; each row is validated against `rowSchema`
   * and dropped with a counted reason when invalid. Row keys are the table's columns. With `out`,
   * each kept row is handed to it as soon as it is validated (so a large capture's rows need not be
   * held at once) and `rows` of the result stays empty. `payload` has passed `payloadSchema`; each
   * endpoint declares the envelope shape it reads.
   */
  toRows(payload: unknown, capture: Capture, out?: RowSink): ParsedRows;
  rowSchema: z.ZodType;
  /** Column holding the row date (`YYYY-MM-DD`, a UTC day per `time`) for history endpoints. */
  dateColumn?: string;
  /** Maximum age (s) of the newest capture before the build reports the source stale. */
  maxStalenessSec: number;
  /**
   * Freshness window (s) of a value of this source as a CURRENT figure: a value whose instant (a
   * snapshot's `observedAt`, a daily point's 00:00 UTC) is more than this before as-of still counts
   * as history but never as the current value of its quantity (published null with
   * `stale-beyond-window`, left out of totals). Declared by the sources of current supply (list,
   * detail, charts, market caps) and FX; loaded into `source_current_windows` for the models.
   * Absent: the source feeds no current figure through the SQL models (prices declare theirs in the
   * peg monitor, `currentQuoteWindowSec`).
   */
  currentWindowSec?: number;
  /** Fetches the payload live. Absent for archive-only inputs. */
  fetchLive?: (client: HttpClient, params: Record<string, string>) => Promise<unknown>;
  /**
   * Reads the payload live from a chain over JSON-RPC (`BALLAST_RPC_<CHAIN>` providers) instead of an
   * HTTP client; `capture` skips it (logged) when no provider of `chain` is configured.
   */
  fetchRpc?: { chain: string; fetch: (rpc: EvmRpc, params: Record<string, string>) => Promise<unknown> };
}

/**
 * A recorded file and how to read it. `observedAt` is Unix seconds (the recording date, UTC);
 * `time` declares the zone of the file's time labels and how its rows map to UTC days (the reader
 * is built with the same zone).
 */
export interface RecordedCapture {
  endpoint: string;
  file: string;
  observedAt: number;
  params?: Record<string, string>;
  time: SourceTime;
  /**
   * True for the inputs without which the build publishes nothing meaningful (the coin list and the
   * all-chain supply history): an empty file fails the build like a missing one. Other captures are
   * optional: an empty one is skipped, named in the manifest (`skippedCaptures`) and in health.
   */
  required?: boolean;
  /** Throws (e.g. a JsonPositionError) when the file cannot be read at all. */
  read: (text: string) => ReaderOutput;
}

/** One call of the live capture plan: an endpoint key (`<source>.<entity>`) and its request params. */
export interface CaptureStep {
  endpoint: string;
  params: Record<string, string>;
}

/**
 * What the live capture plan is built from (registry and config): DefiLlama ids whose per-coin
 * detail is fetched (`detailLlamaIds`), CoinGecko ids whose market chart is fetched
 * (`chartGeckoIds`), the first day of the FX range (`fxStart`, `YYYY-MM-DD`) and the Bluechip slugs.
 */
export interface LivePlanOptions {
  detailLlamaIds: string[];
  chartGeckoIds: string[];
  fxStart: string;
  bluechipSlugs?: string[];
}

/**
 * A payload for an endpoint's parser test holding one good element and one malformed element: the
 * envelope must pass `payloadSchema`, the good row survive and the bad one be dropped and counted.
 */
export interface BadRowFixture {
  payload: unknown;
  params?: Record<string, string>;
}

/**
 * One source, declared once in `pipelines/sources/<name>/source.ts` (found by file by
 * `pipelines/sources/sources.ts`; its staging SQL `stg_<name>__<entity>.sql` sits beside it).
 * Every central list is a view of these declarations: `ENDPOINTS`, `SOURCE_BASE_URLS`, the live
 * capture plan (`liveCapturePlan`), `RECORDED_CAPTURES` and the circuit groups.
 */
export interface SourceDeclaration {
  /** Marks the export as a source declaration (discovery picks exports with this kind). */
  kind: "source";
  /** Folder name = circuit / host name = `Endpoint.source` of every endpoint here (e.g. `defillama`). */
  name: string;
  /**
   * The source's endpoints (each `key` is `<name>.<entity>`). The lineage `family` of the endpoints
   * whose rows carry the source's own label (no `rowSource`) is the source's circuit group.
   */
  endpoints: Endpoint[];
  /** Base URL of the live HTTP API (a live client's default); absent when no HTTP client reads it. */
  baseUrl?: string;
  /** The calls of the live capture plan for this source; absent when nothing is captured live. */
  livePlan?: (opts: LivePlanOptions) => CaptureStep[];
  /** Recorded files of `../shared/data` read into its endpoints, in load order. */
  recorded?: RecordedCapture[];
  /** Per endpoint key, the bad-row fixture of its parser test (test/unit/sources.test.ts). */
  badRows: Record<string, BadRowFixture>;
}
