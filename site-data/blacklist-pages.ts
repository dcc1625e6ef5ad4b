import { type BlacklistEvent, BlacklistEventSchema } from "./blacklist-event.ts";
import { must } from "../lib/must.ts";

/**
 * Serving layout of the freeze ledger for `/api/blacklist` (api/queries/blacklist-pages.ts reads it):
 * a page is a few byte ranges of published files concatenated into the response, so the server never
 * holds the ledger on the V8 heap. Three files under `site-data/blacklist-pages/`, all derived from the
 * same rows as `site-data/blacklist-events.json` (which stays published for other readers):
 *
 * - `events.jsonl`: one BlacklistEvent per line, serialised once exactly as the route sends it (key
 *   order of BlacklistEventSchema), in date order ascending (`timestamp` asc, then `id` asc by code unit).
 *   Row r is line r.
 * - `index.bin` (little-endian): `BLPX`, u32 version, u32 header length, the header JSON (PagesHeader),
 *   then 8-byte aligned sections named in the header: `offsets` f64[N+1] (byte offset of each line in
 *   events.jsonl; line r is [offsets[r], offsets[r+1] − 1), the −1 drops the newline), `ts` f64[N] (Unix s),
 *   `coin` u16[N] (rank of `stablecoin` in `symbols`), `chainId` u16[N] (rank in `chainIds`), `chainName`
 *   u16[N] (rank in `chainNames`), `type` u8[N] (rank in `eventTypes`), and one permutation u32[N] per
 *   non-date sort (`perm.stablecoin`, `perm.chain`, `perm.event`): the rows in that sort's ascending key
 *   order (prefix, timestamp, id) — a stable counting sort of the date order by the prefix rank. Every
 *   table is sorted by code unit, so ranks compare like the strings.
 * - `addresses.bin`: u32 N, 4 bytes of padding, u32[N+1] offsets into the blob that follows: the
 *   lower-cased `address` of each row, concatenated (the `q` substring filter searches it natively).
 *
 * Index at 1M rows: ~35 MB (read once per build); addresses ~47 MB (read on the first `q`).
 */
export const BLACKLIST_PAGES = {
  events: "site-data/blacklist-pages/events.jsonl",
  index: "site-data/blacklist-pages/index.bin",
  addresses: "site-data/blacklist-pages/addresses.bin",
} as const;

export const PAGES_MAGIC = "BLPX";
export const PAGES_VERSION = 1;
/** Typed arrays use the host's byte order; the layout is little-endian (reader and writer check). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
export const PAGE_SORTS = ["stablecoin", "chain", "event"] as const;

/** Header of `index.bin`: row count, the code tables, the registry chains, section byte ranges. */
export interface PagesHeader {
  version: number;
  rows: number;
  symbols: string[];
  chainIds: string[];
  chainNames: string[];
  eventTypes: string[];
  /** Registry chains (`chain` ↔ `chainId` resolution), as in the JSON ledger. */
  chains: { id: string; name: string }[];
  /** Section name → [byte offset in index.bin, byte length]. */
  sections: Record<string, [number, number]>;
}

/** Code-unit comparison (what `<` does on strings): the order of every keyset comparison. */
export const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const table = (xs: Iterable<string>) => [...new Set(xs)].sort(cmpStr);

/**
 * Encodes the serving layout of `events` (any order; ids unique) with the registry `chains`. Each event
 * is schema-parsed and serialised once (the same bytes the in-heap path sends). Deterministic: the same
 * rows give the same bytes. Returns the three file bodies (BLACKLIST_PAGES paths).
 */
export function encodeBlacklistPages(
  events: readonly BlacklistEvent[],
  chains: readonly { id: string; name: string }[],
): { events: Buffer; index: Buffer; addresses: Buffer } {
  if (!LITTLE_ENDIAN) throw new Error("blacklist pages: the layout is little-endian and written from typed arrays");
  const n = events.length;
  const order = events
    .map((_, i) => i)
    .sort((a, b) => events[a].timestamp - events[b].timestamp || cmpStr(events[a].id, events[b].id));
  const symbols = table(events.map((e) => e.stablecoin));
  const chainIds = table(events.map((e) => e.chainId));
  const chainNames = table(events.map((e) => e.chainName));
  const eventTypes = table(events.map((e) => e.eventType));
  if (symbols.length > 0xffff || chainIds.length > 0xffff || chainNames.length > 0xffff)
    throw new Error("blacklist pages: more than 65535 distinct symbols or chains");
  /** Position of each value in its table (the tables hold every value of the events). */
  const rank = (t: string[]) => {
    const at = new Map(t.map((s, i) => [s, i]));
    return (s: string) => must(at.get(s), "blacklist pages: table position of an event value");
  };
  const [symR, cidR, cnR, typR] = [rank(symbols), rank(chainIds), rank(chainNames), rank(eventTypes)];

  const offsets = new Float64Array(n + 1);
  const ts = new Float64Array(n);
  const coin = new Uint16Array(n);
  const chainId = new Uint16Array(n);
  const chainName = new Uint16Array(n);
  const type = new Uint8Array(n);
  const lines: Buffer[] = [];
  const addrs: Buffer[] = [];
  const addrOff = new Uint32Array(n + 1);
  let pos = 0;
  let apos = 0;
  const nl = Buffer.from("\n");
  for (let r = 0; r < n; r++) {
    const e = events[order[r]];
    // A row failing the schema is left as is: the emitter's check of the JSON ledger fails the build naming the artifact.
    const parsed = BlacklistEventSchema.safeParse(e);
    const line = Buffer.from(JSON.stringify(parsed.success ? parsed.data : e));
    lines.push(line, nl);
    offsets[r] = pos;
    pos += line.byteLength + 1;
    ts[r] = e.timestamp;
    coin[r] = symR(e.stablecoin);
    chainId[r] = cidR(e.chainId);
    chainName[r] = cnR(e.chainName);
    type[r] = typR(e.eventType);
    const a = Buffer.from(e.address.toLowerCase());
    addrs.push(a);
    addrOff[r] = apos;
    apos += a.byteLength;
  }
  offsets[n] = pos;
  addrOff[n] = apos;
  if (apos > 0xffffffff) throw new Error("blacklist pages: addresses above 4 GiB");

  /** Stable counting sort of the date order by a prefix rank: the sort's ascending order. */
  const perm = (codes: Uint16Array | Uint8Array, size: number) => {
    const start = new Uint32Array(size + 1);
    for (let r = 0; r < n; r++) start[codes[r] + 1]++;
    for (let k = 0; k < size; k++) start[k + 1] += start[k];
    const out = new Uint32Array(n);
    for (let r = 0; r < n; r++) out[start[codes[r]]++] = r;
    return out;
  };
  const sections: [string, ArrayBufferView][] = [
    ["offsets", offsets],
    ["ts", ts],
    ["coin", coin],
    ["chainId", chainId],
    ["chainName", chainName],
    ["type", type],
    ["perm.stablecoin", perm(coin, symbols.length)],
    ["perm.chain", perm(chainName, chainNames.length)],
    ["perm.event", perm(type, eventTypes.length)],
  ];
  const header: PagesHeader = {
    version: PAGES_VERSION,
    rows: n,
    symbols,
    chainIds,
    chainNames,
    eventTypes,
    chains: chains.map((c) => ({ id: c.id, name: c.name })),
    sections: {},
  };
  // Section offsets depend on the header length, which depends on the offsets: fix the header length first.
  const headerBytes = (h: PagesHeader) => Buffer.from(JSON.stringify(h));
  const align = (x: number) => Math.ceil(x / 8) * 8;
  let headerLen = 0;
  for (let guard = 0; guard < 4; guard++) {
    let at = align(12 + headerLen);
    for (const [name, v] of sections) {
      header.sections[name] = [at, v.byteLength];
      at = align(at + v.byteLength);
    }
    const len = headerBytes(header).byteLength;
    if (len === headerLen) break;
    headerLen = len;
  }
  const h = headerBytes(header);
  if (h.byteLength !== headerLen) throw new Error("blacklist pages: header length did not settle");
  const last = sections[sections.length - 1];
  const index = Buffer.alloc(align(header.sections[last[0]][0] + last[1].byteLength));
  index.write(PAGES_MAGIC, 0, "latin1");
  index.writeUInt32LE(PAGES_VERSION, 4);
  index.writeUInt32LE(h.byteLength, 8);
  h.copy(index, 12);
  for (const [name, v] of sections)
    Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(index, header.sections[name][0]);

  const addrHead = Buffer.alloc(8);
  addrHead.writeUInt32LE(n, 0);
  const addresses = Buffer.concat([
    addrHead,
    Buffer.from(addrOff.buffer, addrOff.byteOffset, addrOff.byteLength),
    ...addrs,
  ]);
  return { events: Buffer.concat(lines, pos), index, addresses };
}
