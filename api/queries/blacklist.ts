import { z } from "zod";
import {
  type BlacklistEvent,
  BlacklistEventSchema,
  type BlacklistLedger,
  FREEZE_METHODOLOGY,
  FREEZE_METHODOLOGY_LABEL,
} from "../../site-data/blacklist.ts";
import { methodology } from "../../site-data/peg-summary.ts";
import { HttpError } from "../lib/http-error.ts";
import { eventPageBody, eventPageSchema } from "./event-page.ts";
import { keysetPage, type SortKey } from "../lib/keyset.ts";
import { boolParam, intParam } from "../lib/query-params.ts";
import type { ServingBuild } from "../lib/published.ts";

/** `/api/blacklist` body (spec 4.1). */
export const BlacklistResponseSchema = eventPageSchema(BlacklistEventSchema);

/** Query parameters of `/api/blacklist` (spec 4.2). */
export const BlacklistQuery = z.object({
  stablecoin: z
    .string()
    .max(20, "must be at most 20 characters")
    .regex(/^[A-Z0-9₮]+$/, "must be an uppercase tracker symbol such as USDT, not a stablecoin id")
    .optional()
    .describe("Uppercase tracker symbol (`USDT`), not a stablecoin id"),
  chain: z
    .string()
    .max(100, "must be at most 100 characters")
    .optional()
    .describe("Exact chain display name (`Ethereum`)"),
  chainId: z
    .string()
    .max(100, "must be at most 100 characters")
    .optional()
    .describe("Registry chain id (`ethereum`); with `chain`, both must name the same chain"),
  eventType: z
    .enum(["blacklist", "unblacklist", "destroy"], { error: "must be blacklist, unblacklist or destroy" })
    .optional()
    .describe("Event type"),
  q: z.string().max(100, "must be at most 100 characters").optional().describe("Case-insensitive address substring"),
  sortBy: z
    .enum(["date", "stablecoin", "chain", "event"], { error: "must be date, stablecoin, chain or event" })
    .default("date")
    .describe("Sort key (default `date`)"),
  sortDirection: z
    .enum(["asc", "desc"], { error: "must be asc or desc" })
    .default("desc")
    .describe("Sort direction (default `desc`)"),
  limit: intParam(0, 1000)
    .optional()
    .transform((v) => (v === undefined || v === 0 ? 1000 : v))
    .describe("0-1000; 0 and absent mean 1000"),
  offset: intParam(0, 25000).optional().describe("0-25000; cannot combine with cursor"),
  cursor: z
    .string()
    .max(600, "not a cursor returned by this endpoint")
    .optional()
    .describe("Opaque keyset cursor from `nextCursor`, valid for the sort it was issued with"),
  includeTotal: boolParam(false).describe(
    "true runs an exact count; otherwise `total` is a lower bound and `totalExact` false",
  ),
});
export type BlacklistParams = z.output<typeof BlacklistQuery>;

type SortBy = BlacklistParams["sortBy"];
/** Sort key per `sortBy`; time and id break ties, so every order is total and keyset-safe. */
const SORT_KEYS: Record<SortBy, (e: BlacklistEvent) => SortKey> = {
  date: (e) => [e.timestamp, e.id],
  stablecoin: (e) => [e.stablecoin, e.timestamp, e.id],
  chain: (e) => [e.chainName, e.timestamp, e.id],
  event: (e) => [e.eventType, e.timestamp, e.id],
};

/** The ledger sorted ascending by each sort key, computed once per build. */
function sortedBy(build: ServingBuild, ledger: BlacklistLedger, sortBy: SortBy): Promise<BlacklistEvent[]> {
  return build.memo(`blacklist-sorted-${sortBy}`, () => {
    const key = SORT_KEYS[sortBy];
    const keyed = ledger.events.map((e) => [key(e), e] as const);
    keyed.sort((a, b) => {
      for (let i = 0; i < a[0].length; i++) {
        if (a[0][i] !== b[0][i]) return a[0][i] < b[0][i] ? -1 : 1;
      }
      return 0;
    });
    return keyed.map(([, e]) => e);
  });
}

/**
 * The chain id a `/api/blacklist` request filters on, from `chainId` and/or the chain's name `chain`
 * (looked up in `chains`, the ledger's chain list). A name no chain has matches no row (spec 7 rule 3:
 * no matching rows → 200 with empty results), so it yields an id no row carries; undefined without
 * either parameter. @throws HttpError 400 when `chain` and `chainId` name different chains, or
 * `chain` names no chain while `chainId` is set.
 */
export function resolveChainFilter(
  chains: readonly { id: string; name: string }[],
  q: { chain?: string; chainId?: string },
): string | undefined {
  const chainId = q.chainId;
  if (q.chain === undefined) return chainId;
  const named = chains.find((c) => c.name === q.chain);
  if (named && chainId !== undefined && chainId !== named.id)
    throw new HttpError(400, `Invalid parameter chainId: ${chainId} is not the chain named ${q.chain} (${named.id})`);
  if (!named && chainId !== undefined)
    throw new HttpError(
      400,
      `Invalid parameter chain: no chain is named ${q.chain}, so it cannot be chainId ${chainId}`,
    );
  return named?.id ?? `\u0000no-chain:${q.chain}`;
}

/**
 * Pages the build's freeze ledger (spec 4.2): filters combine with AND, four sort keys in both
 * directions, keyset cursors valid for every sort (a cursor continues after its row in the requested
 * order) or an offset up to 25,000. An unknown chain matches nothing (200, empty). Throws HttpError
 * 400 when `chain` and `chainId` name different chains, on offset with cursor, and on a bad cursor.
 */
export async function queryBlacklist(build: ServingBuild, ledger: BlacklistLedger, asOf: number, q: BlacklistParams) {
  const chainId = resolveChainFilter(ledger.chains, q);
  const needle = q.q?.toLowerCase();
  const keep = (e: BlacklistEvent) =>
    (q.stablecoin === undefined || e.stablecoin === q.stablecoin) &&
    (chainId === undefined || e.chainId === chainId) &&
    (q.eventType === undefined || e.eventType === q.eventType) &&
    (needle === undefined || e.address.toLowerCase().includes(needle));
  const sorted = await sortedBy(build, ledger, q.sortBy);
  // Every sort key ends with the event id, so a cursor of any sort names its row (spec 4.2: valid for every sort).
  const byId = await build.memo("blacklist-by-id", () => new Map(ledger.events.map((e) => [e.id, e])));
  const rekey = (k: SortKey) => {
    const e = byId.get(String(k.at(-1)));
    return e ? SORT_KEYS[q.sortBy](e) : null;
  };
  const page = keysetPage(sorted, SORT_KEYS[q.sortBy], {
    sortName: q.sortBy,
    arity: q.sortBy === "date" ? 2 : 3,
    direction: q.sortDirection,
    rekey,
    keep,
    limit: q.limit,
    offset: q.offset,
    cursor: q.cursor,
    includeTotal: q.includeTotal,
  });
  return eventPageBody(page, q, methodology(FREEZE_METHODOLOGY, FREEZE_METHODOLOGY_LABEL, asOf));
}

/**
 * A `/api/blacklist` page as JSON bytes. Each event's JSON is encoded once per build and kept (a
 * WeakMap over the build's parsed events, off the JS heap as Buffers), so a page is one copy of
 * cached fragments: paging a large ledger allocates no large strings and little garbage.
 */
export async function blacklistPageBytes(
  build: ServingBuild,
  page: Awaited<ReturnType<typeof queryBlacklist>>,
): Promise<Uint8Array> {
  const cache = await build.memo("blacklist-event-json", () => new WeakMap<BlacklistEvent, Buffer>());
  const comma = Buffer.from(",");
  const parts: Buffer[] = [Buffer.from('{"events":[')];
  page.events.forEach((e, i) => {
    let j = cache.get(e);
    if (j === undefined) {
      j = Buffer.from(JSON.stringify(e));
      cache.set(e, j);
    }
    if (i > 0) parts.push(comma);
    parts.push(j);
  });
  parts.push(
    Buffer.from(
      `],"total":${page.total},"totalExact":${page.totalExact},"nextCursor":${JSON.stringify(page.nextCursor)},"methodology":${JSON.stringify(page.methodology)}}`,
    ),
  );
  return Buffer.concat(parts);
}
