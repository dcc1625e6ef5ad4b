import { z } from "zod";
import {
  dailyDigestArtifact,
  type DailyDigest,
  DailyDigestSchema,
  DIGEST_INDEX_KEY,
  DigestArchiveSchema,
  DigestIndexSchema,
  digestIndexEntry,
  digestKey,
} from "../../site-data/daily-digest.ts";
import { CalendarDaySchema, snapshotDatabaseKey, storedJson } from "../../site-data/snapshot.ts";
import { CACHE_PROFILES } from "../lib/freshness.ts";
import { HttpError } from "../lib/http-error.ts";
import { bind, type HandlerContext, type JsonRoute, type RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag(
  "digests",
  "Daily digests: what changed during a UTC day (supply, depeg incidents, freezes, grades, stability-index band), the archive and dated editions.",
);
const servedDigest = bind(dailyDigestArtifact);

/** The serving build's edition as stored bytes and payload, or null when the build has none (or it fails its schema). */
async function buildEdition(ctx: HandlerContext): Promise<{ bytes: Uint8Array; digest: DailyDigest } | null> {
  const path = servedDigest.output.path;
  if (!ctx.build?.files.has(path)) return null;
  const bytes = await ctx.build.file(path);
  if (!bytes) return null;
  const digest = storedJson(bytes, DailyDigestSchema);
  return digest ? { bytes, digest } : null;
}

/** End of the window of the edition of UTC day `day` (`YYYY-MM-DD`): the next day's 00:00:00Z, Unix s. */
const editionWindowEnd = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000 + 86400;

/** `date` of digest-snapshot: a real calendar day, `YYYY-MM-DD` or `YYYY-MM-DD-weekly` (spec 4.1). */
const DigestDateParam = z
  .string({ error: "required (YYYY-MM-DD)" })
  .regex(/^\d{4}-\d{2}-\d{2}(-weekly)?$/, "must be YYYY-MM-DD or YYYY-MM-DD-weekly")
  .refine((d) => CalendarDaySchema.safeParse(d.slice(0, 10)).success, "must be a real calendar date")
  .describe("UTC day YYYY-MM-DD (weekly editions, YYYY-MM-DD-weekly, are not composed: 404)");
/** Query of `/api/digest-snapshot`. */
const DigestSnapshotQuery = z.object({ date: DigestDateParam });

/**
 * Digest archive and dated digests (spec 4.1). Dated editions (`digests/<day>.json`) are written with
 * each day's snapshot (`build --from … --to …`) and never rewritten; the serving build's own edition
 * (`/api/daily-digest`) is listed and served too while no dated copy of its day exists.
 */
export const DIGEST_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getDigestArchive",
    method: "GET",
    path: "/api/digest-archive",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    cacheable: false,
    maxAgeSec: 86400,
    summary: "Digest archive",
    description:
      "Every daily edition, newest first: `{digests: [{date, headline, depegIncidentsOpened, depegIncidentsClosed, freezes, gradeChanges, stabilityIndexBandChanged, contentHash, byteSize}]}`: the dated editions written with each day's snapshot, plus the serving build's edition when its day has no dated copy. `contentHash` is the sha256 of the edition's bytes as `/api/digest-snapshot` serves them. Cache profile `standard` with freshness headers (`X-Data-Age`, `X-Data-Updated-At`) of the newest edition's window end (budget 1 day); `{digests: []}` before any edition exists (freshness unknown, `no-store`); 500 when the stored archive is unreadable.",
    response: DigestArchiveSchema,
    async handler(ctx) {
      const rows =
        (await ctx.store.storedPayload(DIGEST_INDEX_KEY, DigestIndexSchema, "Digest archive corrupted"))?.value
          .digests ?? [];
      const own = await buildEdition(ctx);
      const ownRow = own && !rows.some((r) => r.date === own.digest.date) ? digestIndexEntry(own.bytes) : null;
      const digests = ownRow ? [...rows, ownRow].sort((a, b) => b.date.localeCompare(a.date)) : rows;
      // Freshness of the newest edition: its window closes at its day's end (the next 00:00 UTC).
      const newest = digests[0];
      return { payload: { digests }, dataAsOf: newest ? editionWindowEnd(newest.date) : null };
    },
  },
  {
    kind: "json",
    operationId: "getDigestSnapshot",
    method: "GET",
    path: "/api/digest-snapshot",
    lane: "apiKey",
    tag,
    cache: "archive",
    meta: false,
    cacheable: false,
    summary: "Digest for a date",
    description:
      "The daily edition of UTC day `date` (same fields as `/api/daily-digest`, without `_meta`), byte for byte as stored: the dated copy written with that day's snapshot, else the serving build's edition when it is of that day. 400 naming `date` when it is missing or not a real calendar date; 404 `No digest found for this date` (weekly editions are not composed); 500 when the stored edition fails its schema.",
    query: DigestSnapshotQuery,
    response: DailyDigestSchema,
    async handler(ctx) {
      const { date } = ctx.query as z.output<typeof DigestSnapshotQuery>;
      if (!date.endsWith("-weekly")) {
        const stored = await ctx.store.storedPayload(
          digestKey(date),
          DailyDigestSchema,
          `Digest payload corrupted: ${date}`,
        );
        if (stored) return { bytes: stored.bytes, dataAsOf: stored.value.windowEnd };
        const own = await buildEdition(ctx);
        if (own?.digest.date === date) return { bytes: own.bytes, dataAsOf: own.digest.windowEnd };
      }
      throw new HttpError(404, "No digest found for this date");
    },
  } satisfies JsonRoute,
  {
    kind: "static",
    operationId: "getSnapshotDatabase",
    method: "GET",
    path: "/snapshots/:date/ballast.duckdb",
    lane: "public",
    tag: "snapshots",
    mediaType: "application/octet-stream",
    cache: "immutable-snapshot",
    params: z.object({ date: CalendarDaySchema.describe("UTC day YYYY-MM-DD") }),
    summary: "The DuckDB database of a dated snapshot",
    description:
      "Registry and every mart as of the snapshot day's close, written with `/api/snapshots/{date}.json`, for `duckdb -readonly`. 404 when no snapshot of that day is stored. Its bytes are not reproducible (DuckDB's file format); its tables are.",
    async handler(ctx) {
      const bytes = await ctx.store.object(snapshotDatabaseKey(ctx.params.date));
      return bytes
        ? { bytes, contentType: "application/octet-stream", cacheControl: CACHE_PROFILES["immutable-snapshot"] }
        : null;
    },
  },
];
