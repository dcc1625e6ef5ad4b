import { z } from "zod";
import { apiLog, errorMessage } from "../log.ts";
import type { CoinCatalog } from "./coins.ts";
import type { DispatchSource } from "./service.ts";
import { type AdoptionSnapshot, type TelegramStore, utcDay } from "./store.ts";

/**
 * The messaging-bot adoption pulse (spec 2.16), computed from the state store at request time.
 *
 * Terms: a watcher is an active chat (opted in with /start, a follow or the mini-app, and not stopped
 * or blocked since). A coin subscription is a distinct (active chat, coin) pair: explicit when the chat
 * follows the coin, preset-implied when only a followed preset implies it (explicit + implied =
 * coinSubscriptions). "Today" is the current UTC day of the wall clock: the bot lives on Telegram's
 * clock, whatever the API's clock mode, and every time here is wall-clock Unix seconds.
 *
 * Privacy: counts of people (watchers, preset followers, the day's lifecycle and mini-app counts, the
 * history rows' watcher counts) between 1 and 4 are published as null and named in
 * `privacy.suppressedFields` (history fields as `watcherHistory[<date>].<field>`); 0 and counts of 5 or
 * more are exact. While there are 1-4 active watchers, what they follow is suppressed too (null and
 * listed): the three subscription counts and `topCoins` (with one watcher they would tell exactly which
 * coins that person follows). `miniAppDeniedToday` (refused calls, not people) is never suppressed;
 * the open → first-mutation median is suppressed while it has 1-4 samples.
 */

/** Counts from 1 to this minus one are suppressed. */
export const LOW_CARDINALITY_THRESHOLD = 5;
/** Days of lifecycle history the pulse lists (today included). */
export const WATCHER_HISTORY_DAYS = 30;
/** How often the pulse is recomputed (s): once per request, and CDNs keep it 300 s (cache profile `custom`). */
export const PULSE_EVERY_SEC = 300;
/** How often the lifecycle snapshot is expected (s): once a day, by the website-internal adoption POST. */
export const LIFECYCLE_SNAPSHOT_EVERY_SEC = 86400;
/** Coins listed in `topCoins`. */
export const TOP_COINS = 5;

const count = z.number().int().nonnegative();
const suppressible = count.nullable();

/** One day of watcher lifecycle (`date` UTC `YYYY-MM-DD`, `timestamp` its start, Unix s). */
export const WatcherHistoryRowSchema = z.object({
  date: z.string().describe("UTC day YYYY-MM-DD"),
  timestamp: z.number().int().describe("Unix s: start of the UTC day"),
  snapshotAt: z
    .number()
    .int()
    .optional()
    .describe("Unix s when the day's snapshot was recorded; absent on today's live row (no snapshot yet)"),
  newWatchers: suppressible.describe("Chats that opted in for the first time that day (null: 1-4, suppressed)"),
  activeWatchers: suppressible.describe("Active chats at the snapshot (null: 1-4, suppressed)"),
  churnedWatchers: suppressible
    .optional()
    .describe("Chats that stopped or blocked the bot that day (null: 1-4, suppressed)"),
  reactivatedWatchers: suppressible
    .optional()
    .describe("Inactive chats that came back that day (null: 1-4, suppressed)"),
});

/** Spec 2.16. */
export const TelegramPulseSchema = z.object({
  activeWatchers: suppressible.describe("Active chats (null: 1-4, suppressed)"),
  coinSubscriptions: count
    .nullable()
    .describe(
      "Distinct (active chat, coin) pairs, explicit or preset-implied (null: no coin list published yet, or 1-4 active watchers, suppressed)",
    ),
  explicitCoinSubscriptions: suppressible.describe(
    "Pairs from explicit coin follows (null: 1-4 active watchers, suppressed)",
  ),
  presetImpliedCoinSubscriptions: count
    .nullable()
    .describe(
      "Pairs implied only by a followed preset (null: no coin list published yet, or 1-4 active watchers, suppressed)",
    ),
  activePresetFollowers: suppressible.describe("Active chats following at least one preset (null: 1-4, suppressed)"),
  newWatchersToday: suppressible.describe("Chats that opted in for the first time today (null: 1-4, suppressed)"),
  churnedWatchersToday: suppressible.describe("Chats that stopped or blocked the bot today (null: 1-4, suppressed)"),
  reactivatedWatchersToday: suppressible.describe("Inactive chats that came back today (null: 1-4, suppressed)"),
  historySource: z
    .enum(["snapshot", "live-fallback"])
    .describe(
      "`snapshot`: today's history row is the snapshot the adoption POST recorded; `live-fallback`: none yet, computed now",
    ),
  pendingDeliveries: count.nullable().describe("Alert deliveries queued (null: dispatcher state unknown)"),
  miniAppSessionsToday: suppressible.describe(
    "Mini-app launches (distinct init data) that opened a session today (null: 1-4, suppressed)",
  ),
  miniAppMutationsToday: suppressible.describe("Mini-app follows/unfollows applied today (null: 1-4, suppressed)"),
  miniAppDeniedToday: count.describe(
    "Mini-app calls refused today (invalid or expired init data, website-internal lane); never suppressed",
  ),
  miniAppReplayClaimsToday: suppressible.describe(
    "Mutations refused today as replays (same init data and requestId again; null: 1-4, suppressed)",
  ),
  miniAppOpenToFirstMutationP50Sec: z
    .number()
    .nonnegative()
    .nullable()
    .describe(
      "Median seconds from a launch's session to its first mutation, over today's launches (null: no sample, or 1-4 samples, suppressed)",
    ),
  currentSnapshotAt: z.number().int().nullable().describe("Unix s of today's snapshot (null: none yet)"),
  lifecycleHistoryUpdatedAt: z
    .number()
    .int()
    .nullable()
    .describe("Unix s of the newest snapshot of any day (null: never)"),
  lifecycleHistoryEverySeconds: z.number().int().describe("Expected spacing of snapshots (s)"),
  quality: z.object({
    status: z.enum(["ok", "partial"]).describe("`partial` when a field is unavailable"),
    unavailableFields: z.array(z.string()).describe("Fields null because their source is unavailable (not suppressed)"),
  }),
  privacy: z.object({
    exactActiveWatchers: z.boolean().describe("activeWatchers is published exactly (false: suppressed)"),
    lowCardinalityThreshold: z.number().int().describe("Counts from 1 to this minus one are published as null"),
    suppressedFields: z.array(z.string()).describe("Fields published as null for privacy"),
  }),
  updatedAt: z.number().int().describe("Unix s when computed"),
  updatedEverySeconds: z.number().int(),
  topCoins: z
    .array(z.string())
    .nullable()
    .describe(
      "Symbols of the most followed coins (explicit or implied), most followed first (null: 1-4 active watchers, suppressed)",
    ),
  watcherHistory: z
    .array(WatcherHistoryRowSchema)
    .describe(
      `Days with a snapshot in the last ${WATCHER_HISTORY_DAYS} UTC days, ascending, plus today's live row while today has none`,
    ),
});
export type TelegramPulse = z.infer<typeof TelegramPulseSchema>;
type HistoryRow = z.infer<typeof WatcherHistoryRowSchema>;

/** Live numbers of the current UTC day, as a snapshot would record them. */
export async function liveSnapshot(
  store: TelegramStore,
  catalog: CoinCatalog,
  wallNow: number,
): Promise<AdoptionSnapshot & { topCoins: { id: string; followers: number }[] }> {
  const totals = await store.subscriptionTotals(catalog.ids(), TOP_COINS);
  const life = await store.lifecycle(wallNow);
  return {
    day: utcDay(wallNow),
    snapshotAt: wallNow,
    ...life,
    activeWatchers: totals.activeWatchers,
    activePresetFollowers: totals.activePresetFollowers,
    explicitCoinSubscriptions: totals.explicitCoinSubscriptions,
    presetImpliedCoinSubscriptions: totals.presetImpliedCoinSubscriptions,
    coinSubscriptions: totals.explicitCoinSubscriptions + totals.presetImpliedCoinSubscriptions,
    topCoins: totals.topCoins,
  };
}

/**
 * Computes the pulse at wall-clock `wallNow`. `dispatch` (optional) gives pendingDeliveries.
 * @throws TelegramStoreError when the store fails.
 */
export async function computePulse(
  store: TelegramStore,
  catalog: CoinCatalog,
  dispatch: DispatchSource | undefined,
  wallNow: number,
): Promise<TelegramPulse> {
  const suppressedFields: string[] = [];
  const unavailableFields: string[] = [];
  const guard = (field: string, v: number): number | null => {
    if (v >= 1 && v < LOW_CARDINALITY_THRESHOLD) {
      suppressedFields.push(field);
      return null;
    }
    return v;
  };

  const live = await liveSnapshot(store, catalog, wallNow);
  const app = await store.miniAppDay(wallNow);
  const today = utcDay(wallNow);
  const { rows, latestAt } = await store.snapshots(utcDay(wallNow - (WATCHER_HISTORY_DAYS - 1) * 86400), today);
  const todaySnapshot = rows.find((r) => r.day === today) ?? null;

  let pendingDeliveries: number | null = null;
  if (dispatch) {
    try {
      pendingDeliveries = (await dispatch.status()).pendingDeliveries;
    } catch (err) {
      apiLog("warn", "telegram", "dispatch status unavailable for the pulse", { error: errorMessage(err) });
    }
  }
  if (pendingDeliveries === null) unavailableFields.push("pendingDeliveries");
  const catalogReady = catalog.size > 0;
  if (!catalogReady) unavailableFields.push("coinSubscriptions", "presetImpliedCoinSubscriptions");

  const activeWatchers = guard("activeWatchers", live.activeWatchers);
  // What 1-4 watchers follow would single them out: suppressed with their count (an unavailable value stays unavailable).
  const fewWatchers = activeWatchers === null;
  const followed = <T>(field: string, v: T | null): T | null => {
    if (v === null || !fewWatchers) return v;
    suppressedFields.push(field);
    return null;
  };
  const historyRow = (s: AdoptionSnapshot, fromSnapshot: boolean): HistoryRow => {
    const at = (f: string) => `watcherHistory[${s.day}].${f}`;
    return {
      date: s.day,
      timestamp: Date.parse(`${s.day}T00:00:00Z`) / 1000,
      ...(fromSnapshot ? { snapshotAt: s.snapshotAt } : {}),
      newWatchers: guard(at("newWatchers"), s.newWatchers),
      activeWatchers: guard(at("activeWatchers"), s.activeWatchers),
      churnedWatchers: guard(at("churnedWatchers"), s.churnedWatchers),
      reactivatedWatchers: guard(at("reactivatedWatchers"), s.reactivatedWatchers),
    };
  };
  const pulse: TelegramPulse = {
    activeWatchers,
    coinSubscriptions: followed("coinSubscriptions", catalogReady ? live.coinSubscriptions : null),
    explicitCoinSubscriptions: followed("explicitCoinSubscriptions", live.explicitCoinSubscriptions),
    presetImpliedCoinSubscriptions: followed(
      "presetImpliedCoinSubscriptions",
      catalogReady ? live.presetImpliedCoinSubscriptions : null,
    ),
    activePresetFollowers: guard("activePresetFollowers", live.activePresetFollowers),
    newWatchersToday: guard("newWatchersToday", live.newWatchers),
    churnedWatchersToday: guard("churnedWatchersToday", live.churnedWatchers),
    reactivatedWatchersToday: guard("reactivatedWatchersToday", live.reactivatedWatchers),
    historySource: todaySnapshot ? "snapshot" : "live-fallback",
    pendingDeliveries,
    miniAppSessionsToday: guard("miniAppSessionsToday", app.sessions),
    miniAppMutationsToday: guard("miniAppMutationsToday", app.mutations),
    miniAppDeniedToday: app.denied,
    miniAppReplayClaimsToday: guard("miniAppReplayClaimsToday", app.replayClaims),
    miniAppOpenToFirstMutationP50Sec:
      guard("miniAppOpenToFirstMutationP50Sec", app.openToFirstMutationSamples) === null
        ? null
        : app.openToFirstMutationP50Sec,
    currentSnapshotAt: todaySnapshot?.snapshotAt ?? null,
    lifecycleHistoryUpdatedAt: latestAt,
    lifecycleHistoryEverySeconds: LIFECYCLE_SNAPSHOT_EVERY_SEC,
    quality: { status: "ok", unavailableFields },
    privacy: {
      exactActiveWatchers: activeWatchers !== null,
      lowCardinalityThreshold: LOW_CARDINALITY_THRESHOLD,
      suppressedFields,
    },
    updatedAt: wallNow,
    updatedEverySeconds: PULSE_EVERY_SEC,
    topCoins: followed(
      "topCoins",
      live.topCoins.map((c) => catalog.symbolOf(c.id)),
    ),
    watcherHistory: [...rows.map((r) => historyRow(r, true)), ...(todaySnapshot ? [] : [historyRow(live, false)])],
  };
  pulse.quality.status = unavailableFields.length ? "partial" : "ok";
  return pulse;
}
