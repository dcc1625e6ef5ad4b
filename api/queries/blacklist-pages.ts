import {
  BLACKLIST_PAGES,
  cmpStr,
  LITTLE_ENDIAN,
  type PAGE_SORTS,
  PAGES_MAGIC,
  PAGES_VERSION,
  type PagesHeader,
} from "../../site-data/blacklist-pages.ts";
import { blacklistLedgerArtifact, FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL } from "../../site-data/blacklist.ts";
import { methodology } from "../../site-data/peg-summary.ts";
import { decodeKeyset, encodeKeyset } from "../lib/cursor.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { ServingBuild } from "../lib/published.ts";
import { type BlacklistParams, resolveChainFilter } from "./blacklist.ts";
import { dropOldest } from "../lib/bounded-map.ts";

/**
 * `/api/blacklist` over the serving layout (site-data/blacklist-pages.ts): filters and keyset positions
 * are resolved on the index's typed arrays (off the V8 heap), and the page's rows are byte ranges of
 * `events.jsonl` read and concatenated into the response. The ledger is never parsed: only the id of
 * the page's last row (its cursor) and of the few rows a foreign cursor's binary search probes.
 */

type Sort = BlacklistParams["sortBy"];
type Column = Uint16Array | Uint8Array;

/** The decoded index of one build (views over the published bytes), with a small cache of `q` match sets. */
export interface PagesIndex {
  header: PagesHeader;
  n: number;
  offsets: Float64Array;
  ts: Float64Array;
  coin: Uint16Array;
  chainId: Uint16Array;
  chainName: Uint16Array;
  type: Uint8Array;
  perm: Record<(typeof PAGE_SORTS)[number], Uint32Array>;
  /** Lower-cased needle → rows whose lower-cased address contains it (1 = match); oldest dropped past Q_CACHE. */
  q: Map<string, Promise<Uint8Array>>;
}

const Q_CACHE = 16;

/** Whether `build` publishes the serving layout (builds before it have only the JSON ledger). */
export const hasPages = (build: ServingBuild) =>
  build.files.has(BLACKLIST_PAGES.index) && build.files.has(BLACKLIST_PAGES.events);

/** A typed view of `bytes` [off, off + len), copied when the offset is not aligned to the element size. */
function view<T extends ArrayBufferView>(
  C: { new (b: ArrayBufferLike, o: number, l: number): T; BYTES_PER_ELEMENT: number },
  bytes: Uint8Array,
  [off, len]: [number, number],
): T {
  const at = bytes.byteOffset + off;
  if (at % C.BYTES_PER_ELEMENT === 0) return new C(bytes.buffer, at, len / C.BYTES_PER_ELEMENT);
  const copy = new Uint8Array(len);
  copy.set(bytes.subarray(off, off + len));
  return new C(copy.buffer, 0, len / C.BYTES_PER_ELEMENT);
}

/** Reads and decodes `index.bin` once per build. Throws when it is absent or not a version-1 index. */
export function pagesIndex(build: ServingBuild): Promise<PagesIndex> {
  return build.memo("blacklist-pages-index", async () => {
    if (!LITTLE_ENDIAN) throw new Error("blacklist pages: the layout is little-endian");
    const bytes = await build.file(BLACKLIST_PAGES.index);
    if (!bytes) throw new Error(`${BLACKLIST_PAGES.index} is missing`);
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buf.toString("latin1", 0, 4) !== PAGES_MAGIC || buf.readUInt32LE(4) !== PAGES_VERSION)
      throw new Error(`${BLACKLIST_PAGES.index} is not a version ${PAGES_VERSION} index`);
    const header = JSON.parse(buf.toString("utf8", 12, 12 + buf.readUInt32LE(8))) as PagesHeader;
    const s = header.sections;
    return {
      header,
      n: header.rows,
      offsets: view(Float64Array, bytes, s.offsets),
      ts: view(Float64Array, bytes, s.ts),
      coin: view(Uint16Array, bytes, s.coin),
      chainId: view(Uint16Array, bytes, s.chainId),
      chainName: view(Uint16Array, bytes, s.chainName),
      type: view(Uint8Array, bytes, s.type),
      perm: {
        stablecoin: view(Uint32Array, bytes, s["perm.stablecoin"]),
        chain: view(Uint32Array, bytes, s["perm.chain"]),
        event: view(Uint32Array, bytes, s["perm.event"]),
      },
      q: new Map(),
    };
  });
}

/** Rows whose lower-cased address contains `needle` (non-empty, lower-cased): a native search of `addresses.bin`. */
function qMatches(build: ServingBuild, idx: PagesIndex, needle: string): Promise<Uint8Array> {
  let p = idx.q.get(needle);
  if (p) return p;
  p = (async () => {
    const bytes = await build.file(BLACKLIST_PAGES.addresses);
    if (!bytes) throw new Error(`${BLACKLIST_PAGES.addresses} is missing`);
    const n = idx.n;
    const aoff = view(Uint32Array, bytes, [8, (n + 1) * 4]);
    const blob = Buffer.from(bytes.buffer, bytes.byteOffset + 8 + (n + 1) * 4, aoff[n]);
    const nb = Buffer.from(needle);
    const hit = new Uint8Array(n);
    let at = blob.indexOf(nb, 0);
    while (at !== -1) {
      // the row holding byte `at`: last r with aoff[r] <= at
      let lo = 0,
        hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (aoff[mid + 1] <= at) lo = mid + 1;
        else hi = mid;
      }
      if (at + nb.byteLength <= aoff[lo + 1]) {
        hit[lo] = 1;
        at = blob.indexOf(nb, aoff[lo + 1]);
      } else at = blob.indexOf(nb, at + 1);
    }
    return hit;
  })();
  if (idx.q.size >= Q_CACHE) dropOldest(idx.q);
  idx.q.set(needle, p);
  p.catch(() => idx.q.delete(needle));
  return p;
}

/** Byte range of row r's JSON in events.jsonl (without its newline). */
const rangeOf = (idx: PagesIndex, r: number): [number, number] => [idx.offsets[r], idx.offsets[r + 1] - 1];

/** Ranges of events.jsonl closer than this are read as one (reading a few KB through is cheaper than another read). */
const GAP = 4 * 1024;

/**
 * Reads the JSON of `rows` (row numbers, any order) as few ranges and writes it into one buffer:
 * `head`, the rows in the order given separated by commas, then `tail`. One allocation per page
 * besides the ranges read.
 */
async function pageBody(
  build: ServingBuild,
  idx: PagesIndex,
  rows: readonly number[],
  head: string,
  tail: string,
): Promise<Buffer> {
  const sorted = Float64Array.from(rows).sort();
  const spans: [number, number][] = [];
  for (const r of sorted) {
    const [start, end] = rangeOf(idx, r);
    const last = spans.at(-1);
    if (last && start - last[1] <= GAP) last[1] = Math.max(last[1], end);
    else spans.push([start, end]);
  }
  const got = spans.length ? await build.fileRanges(BLACKLIST_PAGES.events, spans) : [];
  if (!got) throw new Error(`${BLACKLIST_PAGES.events} is missing`);
  /** The buffer holding row r's JSON and its offset there (spans are sorted: binary search by start). */
  const locate = (r: number): [Uint8Array, number, number] => {
    const [start, end] = rangeOf(idx, r);
    let lo = 0,
      hi = spans.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (spans[mid][0] <= start) lo = mid;
      else hi = mid - 1;
    }
    const b = got[lo];
    const from = start - spans[lo][0];
    if (b.byteLength < from + (end - start)) throw new Error(`${BLACKLIST_PAGES.events} is shorter than its index`);
    return [b, from, from + (end - start)];
  };
  let bytes = 0;
  for (const r of rows) bytes += idx.offsets[r + 1] - 1 - idx.offsets[r];
  const t = tail;
  const out = Buffer.allocUnsafe(Buffer.byteLength(head) + bytes + Math.max(0, rows.length - 1) + Buffer.byteLength(t));
  let at = out.write(head, 0);
  for (let k = 0; k < rows.length; k++) {
    if (k > 0) out[at++] = 0x2c; // ","
    const [b, from, to] = locate(rows[k]);
    out.set(b.subarray(from, to), at);
    at += to - from;
  }
  at += out.write(t, at);
  if (at !== out.byteLength) throw new Error("blacklist page: length mismatch");
  return out;
}

/** The JSON of `rows` (row numbers), one buffer each (binary searches and cursors: a row or two). */
async function readRows(build: ServingBuild, idx: PagesIndex, rows: readonly number[]): Promise<Uint8Array[]> {
  const got = await build.fileRanges(
    BLACKLIST_PAGES.events,
    rows.map((r) => rangeOf(idx, r)),
  );
  if (!got) throw new Error(`${BLACKLIST_PAGES.events} is missing`);
  return got;
}

const idOf = (json: Uint8Array) =>
  (JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString("utf8")) as { id: string }).id;

/** The prefix column and its table of a non-date sort. */
function prefixOf(idx: PagesIndex, sort: Sort): { col: Column; names: string[] } | null {
  if (sort === "stablecoin") return { col: idx.coin, names: idx.header.symbols };
  if (sort === "chain") return { col: idx.chainName, names: idx.header.chainNames };
  if (sort === "event") return { col: idx.type, names: idx.header.eventTypes };
  return null;
}

/** Sort key of row r (as the in-heap path computes it): [prefix?, timestamp, id]. */
async function keyOf(
  build: ServingBuild,
  idx: PagesIndex,
  sort: Sort,
  r: number,
  json?: Uint8Array,
): Promise<(string | number)[]> {
  const id = idOf(json ?? (await readRows(build, idx, [r]))[0]);
  const p = prefixOf(idx, sort);
  return p ? [p.names[p.col[r]], idx.ts[r], id] : [idx.ts[r], id];
}

/**
 * Position of a keyset key in a sort's ascending order: the number of rows whose key is < `key`
 * (`inclusive`: ≤ `key`). Prefix and time compare on the index columns; rows tying on both compare by
 * id, read from events.jsonl at the few probes of a binary search. Throws 400 when the key's element
 * types are not those the sort issues.
 */
async function rankOf(
  build: ServingBuild,
  idx: PagesIndex,
  sort: Sort,
  key: (string | number)[],
  inclusive: boolean,
): Promise<number> {
  const p = prefixOf(idx, sort);
  const [kp, kt, kid] = p ? key : [undefined, ...key];
  if ((p && typeof kp !== "string") || typeof kt !== "number" || typeof kid !== "string")
    throw new HttpError(400, "Invalid parameter cursor: not a cursor returned by this endpoint");
  const at = (i: number) => (sort === "date" ? i : idx.perm[sort as (typeof PAGE_SORTS)[number]][i]);
  // prefix as a doubled rank: 2·k for table entry k, 2·k − 1 for a string between entries k − 1 and k
  let kp2 = 0;
  if (p) {
    let lo = 0,
      hi = p.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmpStr(p.names[mid], kp as string) < 0) lo = mid + 1;
      else hi = mid;
    }
    kp2 = lo < p.names.length && p.names[lo] === kp ? 2 * lo : 2 * lo - 1;
  }
  /** Compares row r with the key on (prefix, time) only. */
  const cmpHead = (r: number) => {
    if (p) {
      const d = 2 * p.col[r] - kp2;
      if (d !== 0) return d;
    }
    const t = idx.ts[r];
    return t === kt ? 0 : t < kt ? -1 : 1;
  };
  const bound = (pred: (i: number) => boolean) => {
    let lo = 0,
      hi = idx.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pred(mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const lo = bound((i) => cmpHead(at(i)) < 0);
  const hi = bound((i) => cmpHead(at(i)) <= 0);
  // within [lo, hi) rows tie on (prefix, time) and are ordered by id
  let a = lo,
    b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    const c = cmpStr(idOf((await readRows(build, idx, [at(mid)]))[0]), kid);
    if (c < 0 || (inclusive && c === 0)) a = mid + 1;
    else b = mid;
  }
  return a;
}

/**
 * A cursor issued for another sort order, translated to this order's key of the same row (as the
 * in-heap path's `rekey`): the row is found by its time and id in the date order; null when absent.
 */
async function rekey(
  build: ServingBuild,
  idx: PagesIndex,
  sort: Sort,
  key: (string | number)[],
): Promise<(string | number)[] | null> {
  const id = String(key.at(-1));
  const ts = key.at(-2);
  if (typeof ts !== "number") return null;
  const r = await rankOf(build, idx, "date", [ts, id], false);
  if (r >= idx.n || idx.ts[r] !== ts) return null;
  const json = (await readRows(build, idx, [r]))[0];
  if (idOf(json) !== id) return null;
  return keyOf(build, idx, sort, r, json);
}

/** Decodes `cursor` for `sortName` like keysetPage does, translating a cursor of another order (async: it may read rows). */
async function cursorKey(
  build: ServingBuild,
  idx: PagesIndex,
  sort: Sort,
  sortName: string,
  cursor: string,
): Promise<(string | number)[]> {
  const arity = sort === "date" ? 2 : 3;
  let foreign: (string | number)[] | null = null;
  try {
    return decodeKeyset(cursor, sortName, arity);
  } catch (err) {
    if (!(err instanceof HttpError) || !err.message.startsWith("Invalid parameter cursor: issued for sort")) throw err;
    decodeKeyset(cursor, sortName, arity, (k) => (foreign = k));
    const key = foreign && (await rekey(build, idx, sort, foreign));
    if (!key) throw err;
    return key;
  }
}

/**
 * One `/api/blacklist` page (spec 4.2) as JSON bytes, from the build's serving layout: the same rows,
 * order, cursors, totals and errors as `queryBlacklist` + `blacklistPageBytes` over the JSON ledger
 * (test/api/blacklist-pages.property.test.ts compares them). Cost: the index once per build; per page a
 * binary search (cursor), a scan of the order from there over typed arrays until `limit` + 1 rows
 * pass the filters (`includeTotal`: one pass over every row), and the page's rows read as byte ranges.
 * Throws HttpError 400 as queryBlacklist does, 503 when the index is unreadable.
 */
export async function blacklistPagesBytes(build: ServingBuild, asOf: number, q: BlacklistParams): Promise<Uint8Array> {
  // an unreadable index is a publication problem (503, as a payload failing its schema), not a server error
  const idx = await pagesIndex(build).catch((err: unknown) => {
    if (err instanceof HttpError) throw err; // storage that does not answer keeps its own 503
    throw notYetAvailable(blacklistLedgerArtifact.key);
  });
  const h = idx.header;
  const chainId = resolveChainFilter(h.chains, q);
  if (q.offset !== undefined && q.cursor !== undefined)
    throw new HttpError(400, "Invalid parameter cursor: cannot combine with offset");
  const sort = q.sortBy;
  const sortName = `${sort}:${q.sortDirection}`;
  const desc = q.sortDirection === "desc";
  const n = idx.n;

  // Filters as codes (-1: a value no row has, so nothing matches).
  const code = (t: string[], v: string | undefined) => (v === undefined ? undefined : t.indexOf(v));
  const coin = code(h.symbols, q.stablecoin),
    cid = code(h.chainIds, chainId),
    typ = code(h.eventTypes, q.eventType);
  const needle = q.q?.toLowerCase();
  const none = coin === -1 || cid === -1 || typ === -1;
  const hit = needle && !none ? await qMatches(build, idx, needle) : null;
  const filtered = coin !== undefined || cid !== undefined || typ !== undefined || hit !== null;
  const keep = (r: number) =>
    (coin === undefined || idx.coin[r] === coin) &&
    (cid === undefined || idx.chainId[r] === cid) &&
    (typ === undefined || idx.type[r] === typ) &&
    (hit === null || hit[r] === 1);

  const perm = sort === "date" ? null : idx.perm[sort];
  let i = desc ? n - 1 : 0;
  if (q.cursor !== undefined) {
    const key = await cursorKey(build, idx, sort, sortName, q.cursor);
    i = desc ? (await rankOf(build, idx, sort, key, false)) - 1 : await rankOf(build, idx, sort, key, true);
  }
  const rows: number[] = [];
  let more = false;
  if (!none) {
    let skip = q.offset ?? 0;
    const step = desc ? -1 : 1;
    for (; desc ? i >= 0 : i < n; i += step) {
      const r = perm ? perm[i] : i;
      if (filtered && !keep(r)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      if (rows.length === q.limit) {
        more = true;
        break;
      }
      rows.push(r);
    }
  }
  let total = (q.offset ?? 0) + rows.length;
  if (q.includeTotal) {
    total = 0;
    if (!none && !filtered) total = n;
    else if (!none) for (let r = 0; r < n; r++) if (keep(r)) total++;
  }
  const meta = JSON.stringify(methodology(FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL, asOf));
  const last = rows.length ? rows[rows.length - 1] : -1;
  let nextCursor: string | null = null;
  if (more && last >= 0) {
    // the last row's JSON is read with the page; its id completes the cursor key
    const lastJson = (await readRows(build, idx, [last]))[0];
    nextCursor = encodeKeyset(sortName, await keyOf(build, idx, sort, last, lastJson));
  }
  return pageBody(
    build,
    idx,
    rows,
    '{"events":[',
    `],"total":${total},"totalExact":${q.includeTotal},"nextCursor":${JSON.stringify(nextCursor)},"methodology":${meta}}`,
  );
}
