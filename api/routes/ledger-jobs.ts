import { BlacklistSummarySchema, blacklistSummaryArtifact } from "../../site-data/blacklist.ts";
import { MintBurnHourlySchema, mintBurnFlowsArtifact } from "../../site-data/mint-burn.ts";
import { serviceNow } from "../lib/clock.ts";
import { HttpError } from "../lib/http-error.ts";
import type { JobCommand } from "../lib/jobs.ts";
import type { AdminContext, AdminResult } from "../lib/ops-services.ts";

/**
 * Ledger jobs of spec 4.5 that value or classify the on-chain mint/burn ledger
 * (`backfill-mint-burn-prices`, `reclassify-atomic-roundtrips`, run as `build/ledger-jobs-cli.ts`), and
 * the route-side check of the on-chain operator routes' coin/config filters: a filter that selects no
 * tracked config is a 400 naming the parameter before any job starts. The check reads what the serving
 * build publishes (the freeze configs of `site-data/blacklist-summary.json` coverage, the supply-tracked
 * coins of `site-data/mint-burn-flows.json`), never `pipelines/` (import boundary); without those
 * payloads the job's own check decides (its 400 then comes from the job).
 */

/** How admin.ts runs a job (its `runJob`: the result when it finishes within the wait, else 202). */
export type RunJob = (
  ctx: AdminContext,
  action: string,
  cmd: JobCommand,
  params: unknown,
  group: "ledger" | "build",
) => Promise<AdminResult>;

/** Result of `backfill-mint-burn-prices`, for its `responseDescription`. */
export const MINT_BURN_PRICES_RESULT =
  "`{ totalUpdated, rowsValued, rowsAudited, rowsStillUnpriced, rowsStillMissingAudit, coins[{ stablecoinId, geckoId, unpriced, valued, audited }], asOf, buildBefore, buildAfter, capture }`: the serving build's unpriced mint/burn rows (no USD value: no price rule for the coin/day), the CoinGecko price history of their coins captured through the live client (with provenance, see backfill-cg-prices), a new build as of the serving build's as-of and the rows it values; `rowsAudited`: valued rows whose event day has a price point in the new capture (their value is traceable to it); or 202 `{ ok, accepted, requestId, statusPath }` while it runs";

/** Result of `reclassify-atomic-roundtrips`, for its `responseDescription`. */
export const RECLASSIFY_RESULT =
  "`{ done, updated, hoursRecalculated, batchSize, groups, groupsTotal, cursor, changes[{ id, stablecoinId, hourTs, before, after, pairId }] }`: 1000 same-transaction mint+burn groups of the ledger (and the recorded logs) per call, in key order, classified by the build's own round-trip rule; `changes` are the rows whose atomic classification differs from the serving build's (`before`: its flow type, null when it does not publish the row; `after`: `atomic_roundtrip` or `not_atomic`), which the next build publishes; `hoursRecalculated`: (coin, UTC hour) buckets of the hourly flows those changes move. Repeat until `done`; or 202 while it runs";

/** The serving build's published payload at `path` (schema-checked), or undefined without a build or payload. */
async function published<T>(ctx: AdminContext, path: string, parse: (x: unknown) => T): Promise<T | undefined> {
  const build = await ctx.ops.store.build();
  return build ? await build.payload(path, parse).catch(() => undefined) : undefined;
}

const sameCoin = (want: string, id: string, symbol: string) =>
  id === want.toLowerCase() || symbol.toLowerCase() === want.toLowerCase();

/**
 * 400 before any job when `stablecoin` / `chainId` select no freeze config of the serving build
 * (`coverage.supported`; with `includeDeferred`, the deferred configs count too: their recorded rows can
 * still be listed). The parameter named is `stablecoin` when no config has that coin, else `chainId`.
 * No published summary: no check here (the job checks).
 */
export async function checkFreezeFilter(
  ctx: AdminContext,
  q: { stablecoin?: string; chainId?: string },
  includeDeferred: boolean,
): Promise<void> {
  if (q.stablecoin === undefined && q.chainId === undefined) return;
  const summary = await published(ctx, blacklistSummaryArtifact.outputs.main.path, (x) =>
    BlacklistSummarySchema.parse(x),
  );
  if (!summary) return;
  const configs = [
    ...summary.coverage.supported.map((c) => ({ id: c.stablecoinId, symbol: c.symbol, chain: c.chainId })),
    ...(includeDeferred
      ? summary.coverage.unsupportedDeferred.map((c) => ({ id: "", symbol: c.symbol, chain: c.chainId }))
      : []),
  ];
  const { stablecoin, chainId } = q;
  const byCoin = stablecoin === undefined ? configs : configs.filter((c) => sameCoin(stablecoin, c.id, c.symbol));
  if (!byCoin.length)
    throw new HttpError(
      400,
      `Invalid parameter stablecoin: no tracked freeze config of ${JSON.stringify(stablecoin)} (id or symbol)`,
    );
  if (chainId !== undefined && !byCoin.some((c) => c.chain === chainId))
    throw new HttpError(
      400,
      `Invalid parameter chainId: no tracked freeze config on ${JSON.stringify(chainId)}${stablecoin === undefined ? "" : ` for ${stablecoin}`}`,
    );
}

/**
 * 400 before any job when `configKey` (`<stablecoinId>:<chainId>:<contract>:<family>`) is malformed or
 * names a coin without tracked supply contracts in the serving build (`site-data/mint-burn-flows.json`
 * coins). The exact key (contract and family) is checked by the job. No published flows: no check here.
 */
export async function checkSupplyConfigKey(ctx: AdminContext, configKey: string): Promise<void> {
  const parts = configKey.split(":");
  if (parts.length !== 4 || parts.some((p) => p === ""))
    throw new HttpError(
      400,
      "Invalid parameter configKey: must be <stablecoinId>:<chainId>:<contract>:<family> (see debug-sync-state)",
    );
  const flows = await published(ctx, mintBurnFlowsArtifact.outputs.main.path, (x) => MintBurnHourlySchema.parse(x));
  if (!flows) return;
  if (!flows.coins.some((c) => c.stablecoinId === parts[0]))
    throw new HttpError(400, `Invalid parameter configKey: ${parts[0]} has no tracked supply (mint/burn) config`);
}

/**
 * Handler of `POST /api/backfill-mint-burn-prices`: starts `build/ledger-jobs-cli.ts mint-burn-prices
 * --to <last completed UTC day> --ledger <path>` in the `build` lock group (it captures and publishes a new build).
 */
export function backfillMintBurnPrices(run: RunJob) {
  return async (ctx: AdminContext): Promise<AdminResult> => {
    const { now } = serviceNow(await ctx.ops.store.build(), ctx.ops.clockMode, ctx.ops.nowMs());
    const to = new Date((Math.floor(now / 86_400) - 1) * 86_400_000).toISOString().slice(0, 10);
    return run(
      ctx,
      "backfill-mint-burn-prices",
      { script: "build/ledger-jobs-cli.ts", args: ["mint-burn-prices", "--to", to, "--ledger", ctx.ops.ledgerPath] },
      { to },
      "build",
    );
  };
}

/** Handler of `POST /api/reclassify-atomic-roundtrips`: `build/ledger-jobs-cli.ts reclassify-atomic-roundtrips --ledger <path>` in the `ledger` group. */
export function reclassifyAtomicRoundtrips(run: RunJob) {
  return (ctx: AdminContext): Promise<AdminResult> =>
    run(
      ctx,
      "reclassify-atomic-roundtrips",
      { script: "build/ledger-jobs-cli.ts", args: ["reclassify-atomic-roundtrips", "--ledger", ctx.ops.ledgerPath] },
      {},
      "ledger",
    );
}
