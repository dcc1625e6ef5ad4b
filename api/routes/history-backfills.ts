import type { z } from "zod";
import { StablecoinsPayloadSchema, stablecoinsArtifact } from "../../site-data/stablecoins.ts";
import { serviceNow } from "../lib/clock.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { JobCommand } from "../lib/jobs.ts";
import type { ServingBuild } from "../lib/published.ts";
import type { AdminContext, AdminResult } from "../lib/ops-services.ts";

/**
 * The history backfills of spec 4.5 (`backfill-depegs`, `backfill-supply-history`, `backfill-cg-prices`):
 * the route picks the coins (synchronously, so a bad or empty filter is a 400 before any job starts),
 * then starts `build/backfill-history-cli.ts <job> --coins … --to <last completed UTC day>` in the
 * `build` lock group, which captures the coins' history through the live clients and rebuilds the
 * dated snapshots of the captured window (published days skipped; see build/backfill-history.ts).
 */

/** A history backfill route's action and the job name its script takes. */
export const HISTORY_BACKFILLS = {
  "backfill-depegs": "depegs",
  "backfill-supply-history": "supply-history",
  "backfill-cg-prices": "cg-prices",
} as const;
export type HistoryBackfillAction = keyof typeof HISTORY_BACKFILLS;

/** Result shape of the three routes, for their `responseDescription`. */
export const HISTORY_BACKFILL_RESULT =
  "`{ job, coins[], captured[{ key, endpoint, params, url, fetchedAt, sha256, bytes, firstDay, lastDay }], failed[], skipped[{ coin, reason }], window: { from, to } | null, rebuild: { from, to } | null (the window from the first published dated day on), days[{ day, outcome: built|skipped }], built, provenance }` (captures under `raw/<source>/<day>/`, provenance in `backfills/`; published days are skipped, never rewritten), or 202 `{ ok, accepted, requestId, statusPath }` while it runs; 400 naming `stablecoin` or `batch` when the filter selects no coin";

/** Coin the serving build lists: id and symbol (reviewed coins only: unreviewed ones are not in the registry). */
interface ListedCoin {
  id: string;
  symbol: string;
}

/**
 * The coins a filter selects, deterministically: `stablecoin` (an id, or a symbol case-insensitively;
 * every coin of that symbol) or else batch `batch` of `batchSize` coins of the list sorted by id.
 * @throws HttpError 400 naming `stablecoin` when it matches no coin, `batch` when the batch is empty.
 */
export function selectCoins(
  coins: ListedCoin[],
  q: { stablecoin?: string; batch: number; batchSize: number },
): string[] {
  const sorted = [...coins].sort((a, b) => a.id.localeCompare(b.id));
  if (q.stablecoin !== undefined) {
    const s = q.stablecoin;
    const byId = sorted.filter((c) => c.id === s);
    const chosen = byId.length ? byId : sorted.filter((c) => c.symbol.toLowerCase() === s.toLowerCase());
    if (!chosen.length)
      throw new HttpError(400, `Invalid parameter stablecoin: no stablecoin with id or symbol ${JSON.stringify(s)}`);
    return chosen.map((c) => c.id);
  }
  const batches = Math.ceil(sorted.length / q.batchSize);
  const chosen = sorted.slice(q.batch * q.batchSize, (q.batch + 1) * q.batchSize);
  if (!chosen.length)
    throw new HttpError(
      400,
      `Invalid parameter batch: batch ${q.batch} selects no coin (${sorted.length} coins, batches 0-${batches - 1} of ${q.batchSize})`,
    );
  return chosen.map((c) => c.id);
}

/**
 * Handler of one history backfill route: validates the filter against the serving build's stablecoin
 * list (503 without one), then runs the job through `run` (admin.ts runJob: its result, or 202).
 * `batchSize` defaults to 3 for backfill-depegs (spec: 3 coins per batch).
 */
export function historyBackfill(
  action: HistoryBackfillAction,
  run: (ctx: AdminContext, action: string, cmd: JobCommand, params: unknown, group: "build") => Promise<AdminResult>,
) {
  return async (ctx: AdminContext): Promise<AdminResult> => {
    const q = ctx.query as { stablecoin?: string; batch: number; batchSize?: number };
    const batchSize = q.batchSize ?? 3;
    const { build, list } = await servingStablecoinList(
      ctx,
      "no published build (the stablecoin list selects the coins)",
    );
    const coins = selectCoins(
      list.peggedAssets.filter((a) => a.unreviewed !== true),
      { stablecoin: q.stablecoin, batch: q.batch, batchSize },
    );
    const { now } = serviceNow(build, ctx.ops.clockMode, ctx.ops.nowMs());
    const to = new Date((Math.floor(now / 86_400) - 1) * 86_400_000).toISOString().slice(0, 10);
    const job = HISTORY_BACKFILLS[action];
    return run(
      ctx,
      action,
      { script: "build/backfill-history-cli.ts", args: [job, "--coins", coins.join(","), "--to", to] },
      { ...ctx.query, coins, to },
      "build",
    );
  };
}

/**
 * The serving build and its stablecoin list (the `/api/stablecoins` payload, schema-checked).
 * @throws HttpError 503 `noBuild` without a published build, or naming the artifact when its list is unreadable.
 */
export async function servingStablecoinList(
  ctx: AdminContext,
  noBuild = "no published build",
): Promise<{ build: ServingBuild; list: z.output<typeof StablecoinsPayloadSchema> }> {
  const build = await ctx.ops.store.build();
  if (!build) throw notYetAvailable(noBuild);
  const list = await build
    .payload(stablecoinsArtifact.outputs.main.path, (x) => StablecoinsPayloadSchema.parse(x))
    .catch(() => undefined);
  if (!list) throw notYetAvailable(stablecoinsArtifact.key);
  return { build, list };
}
