import { createBase58check } from "@scure/base";
import { bytesToHex, hexToBytes, sha256 } from "viem";
import { z } from "zod";
import {
  EVENT_KINDS,
  type EventKind,
  type OnchainEventRow,
  OnchainEventRowSchema,
  onchainEventId,
} from "../onchain/contract.ts";
import type { TrackedConfig } from "../onchain/tracked.ts";
import type { FamilyEvent } from "../registry/schema.ts";
import { HttpClient, type HttpClientOptions, UpstreamError } from "./http-client.ts";
import { must } from "../../lib/must.ts";

/**
 * TronGrid (TRON's hosted node + indexed event API, `TRON-US/trongrid` README "Get Events By
 * Contract Address"): the live client and parser of the freeze/blacklist events of tracked Tron
 * contracts (USDT `tether-legacy-blacklist`, USD1 `wlfi-freeze`). One source, one module:
 *
 * - `parseTronEvents` turns one `GET /v1/contracts/{address}/events` payload into on-chain event
 *   rows (pipelines/onchain/contract.ts), counting unknown event names and dropped events.
 * - `fetchTronEventPages` pages through the confirmed events of a config, one event name at a time
 *   (`event_name` filter: an unfiltered USDT stream would be every Transfer), and yields each page
 *   with the durable cursor the caller may persist after storing the page's rows.
 * - `tronHexToBase58` / `tronBase58ToHex`: TRON address base58check (0x41 prefix, double-SHA-256
 *   checksum), via `@scure/base` and viem's `sha256`.
 *
 * Times: `block_timestamp` and every cursor here are Unix **milliseconds**; rows carry Unix
 * seconds (`ts`). Amounts are exact base units as decimal strings (never JS numbers).
 */

/** TronGrid API origin (mainnet). Paths are appended as `/v1/...`. */
export const TRONGRID_BASE_URL = "https://api.trongrid.io";

/** Header TronGrid reads the API key from (optional; keyless calls get a lower rate limit). */
export const TRONGRID_API_KEY_HEADER = "TRON-PRO-API-KEY";

/** Largest `limit` TronGrid serves per page. */
export const TRONGRID_MAX_PAGE_SIZE = 200;

/**
 * Default settle margin, ms: when the caller gives no `maxBlockTimestampMs`, a run reads up to
 * `now − TRONGRID_SETTLE_MS`, so every event in the window is solidified (TRON confirms after
 * 19 blocks ≈ 1 min) and indexed before it is read; see fetchTronEventPages.
 */
export const TRONGRID_SETTLE_MS = 10 * 60_000;

/** Default pause between two TronGrid calls of one run, ms (Pharos keeps to ≤ 3 req/s). */
export const TRONGRID_MIN_REQUEST_INTERVAL_MS = 350;

// ---------------------------------------------------------------------------------------------
// Addresses (base58check with the 0x41 mainnet prefix).

const TRON_PREFIX = 0x41;
const base58check = createBase58check((data) => sha256(data, "bytes"));

/**
 * TRON hex address → base58check (`T…`, 34 chars).
 *
 * Accepts `41` + 40 hex digits (21 bytes, with or without `0x`), or a 20-byte EVM-style form
 * (`0x` + 40 hex digits, or 40 bare hex digits) as TronGrid's event `result` returns it, in which
 * case the `41` prefix is restored. Case-insensitive.
 *
 * @throws Error when the input is none of these forms.
 * @example tronHexToBase58("41a614f803b6fd780986a42c78ec9c7f77e6ded13c") // "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
 */
export function tronHexToBase58(hex: string): string {
  const h = hex.trim().toLowerCase().replace(/^0x/, "");
  let body: string;
  if (/^41[0-9a-f]{40}$/.test(h)) body = h;
  else if (/^[0-9a-f]{40}$/.test(h)) body = `41${h}`;
  else throw new Error(`tron address: not a 21-byte 41-prefixed or 20-byte hex address: ${JSON.stringify(hex)}`);
  return base58check.encode(hexToBytes(`0x${body}`));
}

/**
 * TRON base58check address (`T…`) → hex: `41` + 40 lowercase hex digits, no `0x`.
 *
 * @throws Error when the text is not base58, the 4-byte double-SHA-256 checksum does not match, or
 *   the payload is not 21 bytes starting with 0x41.
 * @example tronBase58ToHex("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t") // "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
 */
export function tronBase58ToHex(b58: string): string {
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(b58.trim());
  } catch (err) {
    throw new Error(`tron address ${JSON.stringify(b58)}: invalid base58check (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (bytes.length !== 21 || bytes[0] !== TRON_PREFIX) {
    throw new Error(`tron address ${JSON.stringify(b58)}: payload is not 21 bytes with the 0x41 prefix`);
  }
  return bytesToHex(bytes).slice(2);
}

/** Any TronGrid address form (base58, `41…`, `0x41…`, `0x` + 20 bytes) → base58; null when invalid. */
function toBase58(value: unknown): string | null {
  if (typeof value !== "string") return null;
  try {
    if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(value)) {
      tronBase58ToHex(value); // checksum check
      return value;
    }
    return tronHexToBase58(value);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Payload schemas.

/**
 * One event of `GET /v1/contracts/{address}/events` `data[]` as TronGrid documents it. Fields
 * the parser needs are required; `event` (signature text with parameter names, e.g.
 * `AddedBlackList(address _user)`), `result_type` and `_unconfirmed` are optional.
 * `result` holds decoded parameters keyed by name and by position (`"0"`, `"1"`, …); addresses
 * there are usually `0x` + 20-byte hex (the 41 prefix dropped), uints decimal strings.
 */
export const TronGridEventSchema = z.object({
  block_number: z.number().int().nonnegative(),
  /** Block time, Unix ms. */
  block_timestamp: z.number().int().min(1000),
  caller_contract_address: z.string().optional(),
  /** Base58 (`T…`) in v1 responses; hex tolerated. */
  contract_address: z.string(),
  event_index: z.number().int().nonnegative(),
  event_name: z.string().min(1),
  event: z.string().optional(),
  result: z.record(z.string(), z.unknown()),
  result_type: z.record(z.string(), z.string()).optional(),
  /** 64 hex digits, no `0x`. */
  transaction_id: z.string().regex(/^[0-9a-fA-F]{64}$/),
  _unconfirmed: z.boolean().optional(),
});
/** One validated TronGrid contract event (block_timestamp in Unix ms). */
export type TronGridEvent = z.infer<typeof TronGridEventSchema>;

/**
 * Envelope of `GET /v1/contracts/{address}/events`: `{ data: [...], success: true, meta: { at
 * (Unix ms of the answer), page_size, fingerprint? (next page; absent on the last), links?: { next? } } }`.
 * `data` items stay `unknown` here; each is checked on its own by parseTronEvents.
 */
export const TronGridEventsPageSchema = z.object({
  data: z.array(z.unknown()),
  success: z.literal(true),
  meta: z.object({
    at: z.number(),
    page_size: z.number().int().nonnegative(),
    fingerprint: z.string().min(1).optional(),
    links: z.object({ next: z.string().optional() }).optional(),
  }),
});
/** One validated TronGrid events page envelope (`meta.at` in Unix ms). */
export type TronGridEventsPage = z.infer<typeof TronGridEventsPageSchema>;

// ---------------------------------------------------------------------------------------------
// Parsing.

interface Param {
  type: string;
  name: string | null;
}

/** `uint` → `uint256`, `int` → `int256` (Solidity canonical types); others as written. */
function canonicalType(t: string): string {
  return t === "uint" ? "uint256" : t === "int" ? "int256" : t;
}

/** `Name(type [indexed] [name], …)` → name and ordered params; null when not a signature. */
function parseSignature(text: string): { name: string; params: Param[] } | null {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$/.exec(text);
  if (!m) return null;
  const inner = m[2].trim();
  const params: Param[] =
    inner === ""
      ? []
      : inner.split(",").map((p) => {
          const tokens = p
            .trim()
            .split(/\s+/)
            .filter((t) => t !== "indexed");
          return { type: canonicalType(tokens[0] ?? ""), name: tokens.length > 1 ? tokens[tokens.length - 1] : null };
        });
  if (params.some((p) => p.type === "")) return null;
  return { name: m[1], params };
}

/** A decoded parameter from `result`: by name when present, else by position. */
function resultValue(result: Record<string, unknown>, params: Param[], index: number): unknown {
  const name = params[index]?.name;
  if (name && name in result) return result[name];
  return result[String(index)];
}

/** Exact non-negative integer (decimal string, 0x-hex string, or safe-integer number) → decimal digits; null otherwise. */
function exactUint(value: unknown): string | null {
  if (typeof value === "string" && /^\d+$/.test(value)) return BigInt(value).toString();
  if (typeof value === "string" && /^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value).toString();
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return String(value);
  return null;
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** Throws unless the config is an ingestible Tron config (chain `tron`, address, decimals, family events). */
function assertTronConfig(
  config: TrackedConfig,
): asserts config is TrackedConfig & { address: string; decimals: number } {
  if (config.chain !== "tron")
    throw new Error(`trongrid: config ${config.configKey} is on chain ${config.chain}, not tron`);
  if (config.unsupportedReason !== null || config.address === null || config.decimals === null) {
    throw new Error(
      `trongrid: config ${config.configKey} is not ingestible (${config.unsupportedReason ?? "address or decimals missing"})`,
    );
  }
  if (config.events.length === 0)
    throw new Error(`trongrid: config ${config.configKey} has no events for family ${config.family}`);
}

/** Result of parseTronEvents: validated rows plus counters (keys are event names / drop reasons). */
export interface ParsedTronEvents {
  /** Rows valid against OnchainEventRowSchema, in payload order, duplicate ids removed. */
  rows: OnchainEventRow[];
  /** Events whose `event_name` is not in the config's family, counted per event name. */
  unknown: Record<string, number>;
  /**
   * Events skipped, counted per reason: `unconfirmed` (`_unconfirmed: true`), `event-not-object`,
   * `invalid-<field>` (field fails TronGridEventSchema), `contract-mismatch`, `signature-mismatch`,
   * `kind-unsupported`, `address-missing-or-invalid`, `amount-missing-or-invalid`, `duplicate-id`,
   * `row-invalid-<field>` (row fails OnchainEventRowSchema).
   */
  dropped: Record<string, number>;
}

/**
 * Parses one TronGrid `GET /v1/contracts/{address}/events` payload (see TronGridEventsPageSchema)
 * for a tracked Tron config into on-chain event rows.
 *
 * Mapping per event: the family event is the one whose signature name equals `event_name` (when
 * the event's `event` text is present, its canonical parameter types must equal the family's, else
 * `signature-mismatch`). Affected address = `result[tronResultKey]` when the family event sets it,
 * else the first `address` parameter (by name, else by position), converted to base58 `T…`. For
 * `hasAmount` events the amount is the first `uint*` parameter, kept as exact decimal digits
 * (`amount_source` `event`, `amount_status` `resolved`); otherwise `amount_raw` is null,
 * `amount_source` `unavailable`, `amount_status` `recoverable_pending` (a later balance read may
 * resolve it). Row id `tron-{transaction_id lowercase}-{event_index}`; `ts` = floor(block_timestamp
 * ms / 1000) (Unix s); `tx_hash` is the lowercase 64-hex transaction id without `0x`; `block_hash`
 * and `tx_from` null; `origin` `live`; `decimals` from the config; `contract_address`, `config_key`,
 * `family` from the config; `event_signature`/`topic0` from the registry family.
 *
 * Unconfirmed events are skipped (`dropped.unconfirmed`), malformed ones dropped with a reason and
 * unknown event names counted in `unknown`; none of these throw.
 *
 * @param config tracked config with chain `tron`, a base58 address and decimals.
 * @param payload the parsed JSON body.
 * @throws Error when the config is not an ingestible Tron config.
 * @throws UpstreamError (source `trongrid`) when the envelope is not a successful events page.
 */
export function parseTronEvents(config: TrackedConfig, payload: unknown): ParsedTronEvents {
  assertTronConfig(config);
  const page = TronGridEventsPageSchema.safeParse(payload);
  if (!page.success) {
    throw new UpstreamError(
      `trongrid: events payload failed schema at ${page.error.issues[0]?.path.join(".") || "(root)"}`,
      "trongrid",
    );
  }
  const contractHex = tronBase58ToHex(config.address);
  const byName = new Map<string, FamilyEvent>();
  for (const fe of config.events) {
    const sig = parseSignature(fe.signature);
    if (sig && !byName.has(sig.name)) byName.set(sig.name, fe);
  }

  const rows: OnchainEventRow[] = [];
  const unknown: Record<string, number> = {};
  const dropped: Record<string, number> = {};
  const seen = new Set<string>();

  for (const item of page.data.data) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      bump(dropped, "event-not-object");
      continue;
    }
    const raw = item as Record<string, unknown>;
    if (raw._unconfirmed === true) {
      bump(dropped, "unconfirmed");
      continue;
    }
    if (typeof raw.event_name === "string" && raw.event_name !== "" && !byName.has(raw.event_name)) {
      bump(unknown, raw.event_name);
      continue;
    }
    const parsed = TronGridEventSchema.safeParse(raw);
    if (!parsed.success) {
      bump(dropped, `invalid-${String(parsed.error.issues[0]?.path[0] ?? "event")}`);
      continue;
    }
    const ev = parsed.data;
    // Names outside byName were counted as unknown above; its keys come from parsed signatures.
    const fe = must(byName.get(ev.event_name), `family event ${ev.event_name}`);
    const familySig = must(parseSignature(fe.signature), `signature of ${fe.signature}`);

    const contract = toBase58(ev.contract_address);
    if (contract === null || tronBase58ToHex(contract) !== contractHex) {
      bump(dropped, "contract-mismatch");
      continue;
    }

    let params = familySig.params;
    if (ev.event !== undefined) {
      const sig = parseSignature(ev.event);
      const sameTypes =
        sig !== null &&
        sig.name === ev.event_name &&
        sig.params.length === params.length &&
        sig.params.every((p, i) => p.type === params[i].type);
      if (!sameTypes) {
        bump(dropped, "signature-mismatch");
        continue;
      }
      params = sig.params;
    }

    const kind = fe.kind as EventKind;
    if (!(EVENT_KINDS as readonly string[]).includes(kind)) {
      bump(dropped, "kind-unsupported");
      continue;
    }

    let addressValue: unknown;
    if (fe.tronResultKey !== undefined) {
      const pos = params.findIndex((p) => p.name === fe.tronResultKey);
      addressValue =
        fe.tronResultKey in ev.result ? ev.result[fe.tronResultKey] : pos >= 0 ? ev.result[String(pos)] : undefined;
    } else {
      const pos = params.findIndex((p) => p.type === "address");
      addressValue = pos >= 0 ? resultValue(ev.result, params, pos) : undefined;
    }
    const address = toBase58(addressValue);
    if (address === null) {
      bump(dropped, "address-missing-or-invalid");
      continue;
    }

    let amount: string | null = null;
    if (fe.hasAmount) {
      const pos = params.findIndex((p) => p.type.startsWith("uint"));
      amount = pos >= 0 ? exactUint(resultValue(ev.result, params, pos)) : null;
      if (amount === null) {
        bump(dropped, "amount-missing-or-invalid");
        continue;
      }
    }

    const txHash = ev.transaction_id.toLowerCase();
    const id = onchainEventId("tron", txHash, ev.event_index);
    if (seen.has(id)) {
      bump(dropped, "duplicate-id");
      continue;
    }

    const row = OnchainEventRowSchema.safeParse({
      id,
      chain_id: "tron",
      stablecoin_id: config.stablecoinId,
      config_key: config.configKey,
      contract_address: config.address,
      family: config.family,
      event_name: ev.event_name,
      event_signature: fe.signature,
      topic0: fe.topic0,
      kind,
      address,
      amount_raw: amount,
      decimals: config.decimals,
      amount_source: amount !== null ? "event" : "unavailable",
      amount_status: amount !== null ? "resolved" : "recoverable_pending",
      tx_hash: txHash,
      tx_from: null,
      block_number: ev.block_number,
      block_hash: null,
      log_index: ev.event_index,
      ts: Math.floor(ev.block_timestamp / 1000),
      origin: "live",
    } satisfies OnchainEventRow);
    if (!row.success) {
      bump(dropped, `row-invalid-${row.error.issues[0]?.path.join(".") || "row"}`);
      continue;
    }
    seen.add(id);
    rows.push(row.data);
  }
  return { rows, unknown, dropped };
}

// ---------------------------------------------------------------------------------------------
// Live client.

/** Options of createTronGridClient: HttpClient options (ms) plus the optional API key. */
export type TronGridClientOptions = Partial<Omit<HttpClientOptions, "name" | "headers">> & {
  /** Sent as `TRON-PRO-API-KEY` on every call when given. */
  apiKey?: string;
};

/**
 * The project's HttpClient (timeout, retries on network errors/429/5xx, circuit named `trongrid`)
 * for TronGrid: base URL TRONGRID_BASE_URL unless overridden, concurrency 1, and the
 * `TRON-PRO-API-KEY` header when `apiKey` is given. Never throws.
 */
export function createTronGridClient(options: TronGridClientOptions = {}): HttpClient {
  const { apiKey, ...rest } = options;
  return new HttpClient({
    baseUrl: TRONGRID_BASE_URL,
    concurrency: 1,
    ...rest,
    name: "trongrid",
    headers: apiKey ? { [TRONGRID_API_KEY_HEADER]: apiKey } : undefined,
  });
}

/** Options of fetchTronEventPages. All times Unix milliseconds. */
export interface FetchTronEventPagesOptions {
  /** Window start, inclusive (TronGrid `min_block_timestamp`): the persisted cursor, or the start of history. */
  minBlockTimestampMs: number;
  /** Window end, inclusive (`max_block_timestamp`). Default `now() − TRONGRID_SETTLE_MS`; must be settled (all events ≤ it confirmed). */
  maxBlockTimestampMs?: number;
  /** Events per page (`limit`), 1…200; default 200. */
  pageSize?: number;
  /** API key for the client this function builds when `client` is null (else set it on the client). */
  apiKey?: string;
  /** Pause between calls, ms; default TRONGRID_MIN_REQUEST_INTERVAL_MS. */
  minRequestIntervalMs?: number;
  /** Clock, Unix ms (default Date.now); used only for the default window end. */
  now?: () => number;
}

/** One page yielded by fetchTronEventPages. */
export interface TronEventPage extends ParsedTronEvents {
  /** The `event_name` stream this page belongs to. */
  eventName: string;
  /** Largest `block_timestamp` (Unix ms) among the page's events, null for an empty page. */
  lastBlockTimestampMs: number | null;
  /** `meta.fingerprint` of this page (the next page of the stream), null when the stream is done. */
  fingerprint: string | null;
  /**
   * Durable cursor (Unix ms) of the whole config after this page: safe to persist once this page's
   * rows (and every earlier page's) are stored. Never decreases within a run. See fetchTronEventPages.
   */
  cursorMs: number;
}

/**
 * Pages through the confirmed events of one tracked Tron config:
 * `GET /v1/contracts/{address}/events?event_name=…&only_confirmed=true&order_by=block_timestamp,asc
 * &min_block_timestamp=…&max_block_timestamp=…&limit=…[&fingerprint=…]`, one stream per event name
 * of the config's family (same parameters on every page of a stream, plus `fingerprint` from the
 * previous page's `meta.fingerprint`, until a page has none). Each page is parsed by parseTronEvents.
 * Streams advance laggard-first: the next call is for the unfinished stream with the smallest
 * progress, so the cursor moves steadily through history.
 *
 * Cursor semantics (what the caller must do):
 * - A stream's progress is the block timestamp (ms) of the last event of its last fully read page
 *   (`lastBlockTimestampMs`), or the window end once the stream's last page is read (the window is
 *   settled, so nothing more can appear in it), or `minBlockTimestampMs` before its first event.
 * - `cursorMs` = the minimum progress over the family's streams. Store the page's rows first, then
 *   persist `cursorMs` (per config key). Next run: `minBlockTimestampMs = cursorMs` — inclusive, so
 *   events sharing the cursor's timestamp (same block, or the next page) are read again; dedupe by
 *   primary key (row `id`). A crash at any point therefore never loses an event: at worst a page is
 *   re-read.
 * - An unparseable page throws; nothing of it is yielded and the cursor does not move past it.
 *
 * @param client a TronGrid HttpClient (createTronGridClient), or null to build one with `opts.apiKey`.
 * @param config ingestible Tron config (see parseTronEvents).
 * @throws Error on a non-Tron/unsupported config, bad options, or `apiKey` given with a client.
 * @throws UpstreamError on a failed call (after HttpClient retries), a bad envelope, or a
 *   fingerprint that repeats (upstream paging loop).
 */
export async function* fetchTronEventPages(
  client: HttpClient | null,
  config: TrackedConfig,
  opts: FetchTronEventPagesOptions,
): AsyncGenerator<TronEventPage, void, void> {
  assertTronConfig(config);
  if (client !== null && opts.apiKey !== undefined) {
    throw new Error("trongrid: apiKey is only used when client is null; set it with createTronGridClient({ apiKey })");
  }
  const http = client ?? createTronGridClient({ apiKey: opts.apiKey });
  const pageSize = opts.pageSize ?? TRONGRID_MAX_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > TRONGRID_MAX_PAGE_SIZE)
    throw new Error(`trongrid: pageSize must be 1…${TRONGRID_MAX_PAGE_SIZE}, got ${pageSize}`);
  const min = opts.minBlockTimestampMs;
  const max = opts.maxBlockTimestampMs ?? (opts.now ?? Date.now)() - TRONGRID_SETTLE_MS;
  if (!Number.isSafeInteger(min) || min < 0)
    throw new Error(`trongrid: minBlockTimestampMs must be a non-negative integer, got ${min}`);
  if (!Number.isSafeInteger(max)) throw new Error(`trongrid: maxBlockTimestampMs must be an integer, got ${max}`);
  if (max < min) return;
  const interval = opts.minRequestIntervalMs ?? TRONGRID_MIN_REQUEST_INTERVAL_MS;

  const names = [
    ...new Set(config.events.map((e) => parseSignature(e.signature)?.name).filter((n): n is string => !!n)),
  ];
  const streams = names.map((name) => ({ name, progress: min, fingerprint: null as string | null, done: false }));
  let lastCallAt = -Infinity;

  for (;;) {
    const open = streams.filter((s) => !s.done);
    if (open.length === 0) return;
    const s = open.reduce((a, b) => (b.progress < a.progress ? b : a));
    const query = new URLSearchParams({
      event_name: s.name,
      only_confirmed: "true",
      order_by: "block_timestamp,asc",
      min_block_timestamp: String(min),
      max_block_timestamp: String(max),
      limit: String(pageSize),
    });
    if (s.fingerprint !== null) query.set("fingerprint", s.fingerprint);
    const wait = lastCallAt + interval - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    lastCallAt = Date.now();
    const payload = await http.getJson(`/v1/contracts/${encodeURIComponent(config.address)}/events?${query}`);
    const parsed = parseTronEvents(config, payload);
    const meta = (payload as TronGridEventsPage).meta;
    const data = (payload as TronGridEventsPage).data;

    let last: number | null = null;
    for (const e of data) {
      const t = (e as { block_timestamp?: unknown } | null)?.block_timestamp;
      if (typeof t === "number" && Number.isSafeInteger(t) && (last === null || t > last)) last = t;
    }
    const next = meta.fingerprint ?? null;
    if (next !== null && next === s.fingerprint) {
      throw new UpstreamError(`trongrid: ${s.name} paging returned the same fingerprint twice`, "trongrid");
    }
    s.fingerprint = next;
    if (next === null) {
      s.done = true;
      s.progress = max;
    } else if (last !== null) s.progress = Math.max(s.progress, Math.min(last, max));
    const cursorMs = Math.min(...streams.map((x) => x.progress));
    yield { eventName: s.name, ...parsed, lastBlockTimestampMs: last, fingerprint: next, cursorMs };
  }
}
