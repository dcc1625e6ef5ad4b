import { decodeKeyset, encodeKeyset } from "./cursor.ts";
import { HttpError } from "./http-error.ts";

/** A sort key tuple: compared element by element (numbers numerically, strings by code unit). */
export type SortKey = (string | number)[];

/** Compares two sort key tuples; negative when `a` sorts first. */
export function compareKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i],
      y = b[i];
    if (x === y) continue;
    return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * One page of `sorted` (ascending by `key`) read in `direction`, keeping rows that pass `keep`:
 * after the keyset `cursor` (exclusive; `arity` elements) or after skipping `offset` matching rows. The cursor names
 * `sortName`; a cursor of another order is translated by `rekey` (continuing after the same row in
 * this order), else 400. Binary search finds the cursor position, so a page
 * costs O(log n + rows scanned). `total` counts every matching row when `includeTotal`.
 * Returns the rows, the next cursor (null on the last page) and the total (null when not asked).
 */
export function keysetPage<T>(
  sorted: T[],
  key: (row: T) => SortKey,
  opts: {
    sortName: string;
    arity: number;
    direction: "asc" | "desc";
    /** Translates a cursor key of another sort order into this order's key of the same row (null: unknown row). */
    rekey?: (key: SortKey) => SortKey | null;
    keep: (row: T) => boolean;
    limit: number;
    offset?: number;
    cursor?: string;
    includeTotal: boolean;
  },
): { rows: T[]; nextCursor: string | null; total: number | null } {
  if (opts.offset !== undefined && opts.cursor !== undefined)
    throw new HttpError(400, "Invalid parameter cursor: cannot combine with offset");
  const sortName = `${opts.sortName}:${opts.direction}`;
  const desc = opts.direction === "desc";
  let i = desc ? sorted.length - 1 : 0;
  if (opts.cursor !== undefined) {
    const after = decodeKeyset(opts.cursor, sortName, opts.arity, opts.rekey);
    // first index whose key is > cursor (asc) / last index whose key is < cursor (desc)
    let lo = 0,
      hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareKeys(key(sorted[mid]), after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    if (desc) {
      lo = 0;
      hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (compareKeys(key(sorted[mid]), after) < 0) lo = mid + 1;
        else hi = mid;
      }
      i = lo - 1;
    } else i = lo;
  }
  const step = desc ? -1 : 1;
  const rows: T[] = [];
  let skip = opts.offset ?? 0;
  let more = false;
  for (; desc ? i >= 0 : i < sorted.length; i += step) {
    const r = sorted[i];
    if (!opts.keep(r)) continue;
    if (skip > 0) {
      skip--;
      continue;
    }
    if (rows.length === opts.limit) {
      more = true;
      break;
    }
    rows.push(r);
  }
  let total: number | null = null;
  if (opts.includeTotal) {
    total = 0;
    for (const r of sorted) if (opts.keep(r)) total++;
  }
  const last = rows.at(-1);
  return { rows, nextCursor: more && last ? encodeKeyset(sortName, key(last)) : null, total };
}
