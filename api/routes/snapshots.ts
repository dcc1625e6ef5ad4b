import { createHash } from "node:crypto";
import { z } from "zod";
import {
  CalendarDaySchema,
  type Snapshot,
  SNAPSHOT_INDEX_KEY,
  SnapshotIndexPageSchema,
  SnapshotIndexSchema,
  snapshotKey,
  SnapshotProjectionSchema,
  SnapshotSchema,
} from "../../site-data/snapshot.ts";
import { HttpError } from "../lib/http-error.ts";
import { intParam } from "../lib/query-params.ts";
import type { HandlerContext, JsonRoute, RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag(
  "snapshots",
  "Immutable dated snapshots (one per UTC day, as of its close), their index, per-coin projections and DuckDB files.",
);

/**
 * The stored snapshot of `day` as bytes, its validated envelope and sha256, checked against the
 * `contentHash` of its row in `snapshots/index.json` before it may be served as immutable: 404 when
 * none is stored or the day has no index row yet (a backfill stopped before writing it adds it on its
 * next run); 500 `Snapshot payload corrupted: <day>` when it fails its schema or its bytes differ
 * from the indexed hash (an edited file; recorded for health), 500 `Snapshot index corrupted` when the
 * index fails its schema.
 */
async function storedSnapshot(
  ctx: HandlerContext,
  day: string,
): Promise<{ bytes: Uint8Array; snapshot: Snapshot; hash: string }> {
  const key = snapshotKey(day);
  const corrupted = `Snapshot payload corrupted: ${day}`;
  const stored = await ctx.store.storedPayload(key, SnapshotSchema, corrupted);
  if (!stored) throw new HttpError(404, `No snapshot for this date: ${day}`);
  const index = await ctx.store.storedPayload(SNAPSHOT_INDEX_KEY, SnapshotIndexSchema, "Snapshot index corrupted");
  const row = index?.value.snapshots.find((r) => r.snapshotDate === day);
  if (!row) throw new HttpError(404, `No snapshot for this date: ${day} (stored, not yet in the snapshot index)`);
  const hash = createHash("sha256").update(stored.bytes).digest("hex");
  if (hash !== row.contentHash) {
    ctx.store.checked(key, false);
    throw new HttpError(500, corrupted);
  }
  return { bytes: stored.bytes, snapshot: stored.value, hash };
}

/** `{date}.json` path segment: a real calendar date followed by `.json`. */
const SnapshotFileParam = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}\.json$/, "must be YYYY-MM-DD.json")
  .refine((s) => CalendarDaySchema.safeParse(s.slice(0, 10)).success, "must be a real calendar date (YYYY-MM-DD.json)");

/** Query of `/api/snapshots/index`: page size and keyset cursor. */
const SnapshotIndexQuery = z.object({
  limit: intParam(1, 500).default(100).describe("Rows per page, 1-500 (default 100)"),
  cursor: CalendarDaySchema.optional().describe(
    "Keyset cursor: the last snapshotDate of the previous page (YYYY-MM-DD)",
  ),
});

/**
 * Dated snapshots (issue 18; spec 4.1, 2.15): immutable files written by `tsx build/cli.ts build --from D
 * --to D` (one per UTC day, as of its close: the next day's 00:00:00Z), outside build folders, so they serve whatever build
 * is current. Bodies are the stored bytes; `ETag` is their sha256 (`<sha256>-<id>` for a projection) and
 * `If-None-Match` with it answers 304.
 */
export const SNAPSHOT_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "listSnapshots",
    method: "GET",
    path: "/api/snapshots/index",
    lane: "apiKey",
    tag,
    cache: "archive",
    meta: false,
    cacheable: false,
    summary: "Public snapshot index",
    description:
      "Every stored dated snapshot, newest first: `snapshotDate`, `buildId`, `methodologyVersions`, `contentHash` (sha256 of the stored bytes, the snapshot's ETag), `byteSize`, `createdAt` (the snapshot's as-of, Unix s), and the day's tamper-evident record: `digestSha256`, `databaseSha256` (the day's DuckDB file), `datedFiles` (dataset day files with their sha256) and the hash-chain link `chainIndex` (publication order), `previousChainHash`, `chainHash`. Keyset pagination: `cursor` is the last `snapshotDate` of the previous page (rows strictly older follow); `limit` 1-500, default 100. `{snapshots: [], ...}` before any snapshot is published.",
    query: SnapshotIndexQuery,
    response: SnapshotIndexPageSchema,
    async handler(ctx) {
      const rows =
        (await ctx.store.storedPayload(SNAPSHOT_INDEX_KEY, SnapshotIndexSchema, "Snapshot index corrupted"))?.value
          .snapshots ?? [];
      const { limit, cursor } = ctx.query as z.output<typeof SnapshotIndexQuery>;
      const after = cursor ? rows.filter((r) => r.snapshotDate < cursor) : rows;
      const page = after.slice(0, limit);
      const hasMore = after.length > limit;
      return {
        payload: {
          snapshots: page,
          pagination: { limit, hasMore, nextCursor: hasMore ? page[page.length - 1].snapshotDate : null },
        },
        dataAsOf: null,
      };
    },
  },
  {
    kind: "json",
    operationId: "getSnapshot",
    method: "GET",
    path: "/api/snapshots/:snapshot",
    lane: "apiKey",
    tag,
    cache: "immutable-snapshot",
    meta: false,
    summary: "Immutable snapshot for a day (`/api/snapshots/{date}.json`)",
    description:
      "The stored snapshot of one UTC day, byte for byte (never rewritten once published): version, snapshotDate, asOf (the day's close: the next day's 00:00:00Z, Unix s), generatedAt, buildId, methodologyVersions, inputs (every capture with its sha256), stablecoins, fxFallbackRates, reportCards, psi, dews, liquidity, depegIncidents (open at as-of or started that day) and `unavailable` (section → why it is empty). `ETag` = sha256 of the bytes; 304 on a matching `If-None-Match`. 400 invalid date, 404 no snapshot (or none indexed yet), 500 `Snapshot payload corrupted: <date>` when the stored payload fails its schema or its sha256 differs from the index's `contentHash` (never served then).",
    params: z.object({ snapshot: SnapshotFileParam.describe("`YYYY-MM-DD.json`") }),
    response: SnapshotSchema,
    async handler(ctx) {
      const { bytes, snapshot, hash } = await storedSnapshot(ctx, ctx.params.snapshot.slice(0, 10));
      return { bytes, dataAsOf: snapshot.asOf, etag: hash };
    },
  },
  {
    kind: "json",
    operationId: "getSnapshotStablecoin",
    method: "GET",
    path: "/api/snapshot/:date/stablecoin/:stablecoinId",
    lane: "apiKey",
    tag,
    cache: "immutable-snapshot",
    meta: false,
    summary: "One stablecoin in a dated snapshot",
    description:
      "Projection of one coin of a dated snapshot (spec 2.15): snapshotDate, stablecoinId, generatedAt, methodologyVersions, the coin's row, and its scores (reportCard, psi, dews, liquidity; each null when the snapshot has none for it). `ETag: <sha256>-<stablecoinId>`. 400 invalid date, 404 no snapshot (or none indexed yet) or coin absent from it, 500 when the stored payload fails its schema or its sha256 differs from the index's `contentHash`.",
    params: z.object({
      date: CalendarDaySchema.describe("UTC day YYYY-MM-DD"),
      stablecoinId: z.string().max(200, "must be at most 200 characters"),
    }),
    response: SnapshotProjectionSchema,
    async handler(ctx) {
      const { snapshot, hash } = await storedSnapshot(ctx, ctx.params.date);
      const id = ctx.params.stablecoinId;
      const stablecoin = snapshot.stablecoins.find((c) => c.id === id);
      if (!stablecoin) throw new HttpError(404, `Stablecoin ${id} is not in the snapshot of ${ctx.params.date}`);
      const payload = SnapshotProjectionSchema.parse({
        snapshotDate: snapshot.snapshotDate,
        stablecoinId: id,
        generatedAt: snapshot.generatedAt,
        methodologyVersions: snapshot.methodologyVersions,
        stablecoin,
        scores: {
          reportCard: snapshot.reportCards.find((c) => c.id === id) ?? null,
          psi: snapshot.psi,
          dews: snapshot.dews.find((c) => c.stablecoinId === id) ?? null,
          liquidity: snapshot.liquidity.find((c) => c.stablecoinId === id) ?? null,
        },
      });
      return { payload, dataAsOf: snapshot.asOf, etag: `${hash}-${id}` };
    },
  } satisfies JsonRoute,
];
