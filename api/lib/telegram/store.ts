import type { SqlClient } from "../key-store.ts";
import { presetPairs } from "./coins.ts";
import type { FollowerLookup } from "./service.ts";

/**
 * The bot's tables in the state store (PGlite or Postgres, the `SqlClient` of the key store). All
 * times are wall-clock Unix seconds (the bot lives on Telegram's clock, whatever the API's clock
 * mode); days are UTC days `YYYY-MM-DD`. Chat ids are Telegram's (they exceed 32 bits): stored as
 * `bigint`, returned as decimal strings.
 *
 * - `telegram_chats`: one row per chat that ever opted in; `active` false once it stopped the bot
 *   (`/stop`: reason `stopped`) or blocked / removed it (reason `blocked`). Follows survive
 *   deactivation (a chat that comes back finds them again) but inactive chats follow nothing.
 * - `telegram_follows`: explicit follows, `kind` `coin` (a stablecoin id) or `preset` (a preset name,
 *   api/lib/telegram/coins.ts; a preset implies its coins).
 * - `telegram_chat_events`: watcher lifecycle, `new` (first opt-in), `churn` (active → inactive),
 *   `reactivate` (inactive → active); the pulse counts them per day.
 * - `telegram_counters`: per-day counters of the mini-app (`mini_app_mutations`, `mini_app_denied`,
 *   `mini_app_replay_claims`).
 * - `telegram_mini_app_launches`: one row per mini-app launch (its init data hash): when its session
 *   opened and when its first mutation landed (open → first mutation time).
 * - `telegram_mini_app_requests`: `(init data hash, requestId)` of every accepted mutation (replay claims).
 * - `telegram_adoption_snapshots`: one lifecycle snapshot per day (the website-internal adoption POST).
 *
 * Every method throws {@link TelegramStoreError} when the store fails (unreachable, timeout).
 */

/** A state-store failure of the bot's tables (callers answer 503, or let Telegram retry the update). */
export class TelegramStoreError extends Error {
  constructor(
    readonly operation: string,
    readonly cause: unknown,
  ) {
    super(`telegram state store: ${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "TelegramStoreError";
  }
}

const SCHEMA = [
  `
create table if not exists telegram_chats (
  chat_id bigint primary key,
  chat_type text not null,
  active boolean not null,
  inactive_reason text,
  created_at bigint not null,
  updated_at bigint not null
)`,
  `
create table if not exists telegram_follows (
  chat_id bigint not null,
  kind text not null check (kind in ('coin', 'preset')),
  target text not null,
  created_at bigint not null,
  primary key (chat_id, kind, target)
)`,
  "create index if not exists telegram_follows_target on telegram_follows (kind, target)",
  `
create table if not exists telegram_chat_events (
  id bigserial primary key,
  chat_id bigint not null,
  kind text not null check (kind in ('new', 'churn', 'reactivate')),
  at bigint not null
)`,
  "create index if not exists telegram_chat_events_at on telegram_chat_events (at)",
  `
create table if not exists telegram_counters (
  day text not null,
  name text not null,
  value bigint not null,
  primary key (day, name)
)`,
  `
create table if not exists telegram_mini_app_launches (
  init_hash text primary key,
  user_id bigint not null,
  opened_at bigint not null,
  first_mutation_at bigint
)`,
  "create index if not exists telegram_mini_app_launches_opened on telegram_mini_app_launches (opened_at)",
  `
create table if not exists telegram_mini_app_requests (
  init_hash text not null,
  request_id text not null,
  at bigint not null,
  primary key (init_hash, request_id)
)`,
  "create index if not exists telegram_mini_app_requests_at on telegram_mini_app_requests (at)",
  `
create table if not exists telegram_adoption_snapshots (
  day text primary key,
  snapshot_at bigint not null,
  active_watchers integer not null,
  new_watchers integer not null,
  churned_watchers integer not null,
  reactivated_watchers integer not null,
  coin_subscriptions integer not null,
  explicit_coin_subscriptions integer not null,
  preset_implied_coin_subscriptions integer not null,
  active_preset_followers integer not null
)`,
];

/** Why a chat is inactive: it sent `/stop`, or Telegram reported the bot blocked / removed. */
export type InactiveReason = "stopped" | "blocked";

/** Outcome of an opt-in: a chat seen for the first time, an inactive chat back, or no change. */
export type Activation = "new" | "reactivated" | "unchanged";

/** A chat as stored. Times wall-clock Unix s. */
export interface ChatRecord {
  chatId: string;
  chatType: string;
  active: boolean;
  inactiveReason: InactiveReason | null;
  createdAt: number;
}

/** What a chat follows explicitly: coin ids and preset names, ascending. */
export interface ChatFollows {
  coins: string[];
  presets: string[];
}

/** Per-day counters of the mini-app. */
export type CounterName = "mini_app_mutations" | "mini_app_denied" | "mini_app_replay_claims";

/** Watcher lifecycle of one UTC day: distinct chats per event kind. */
export interface DayLifecycle {
  newWatchers: number;
  churnedWatchers: number;
  reactivatedWatchers: number;
}

/** Current subscription totals over active chats (see {@link TelegramStore.subscriptionTotals}). */
export interface SubscriptionTotals {
  activeWatchers: number;
  activePresetFollowers: number;
  explicitCoinSubscriptions: number;
  presetImpliedCoinSubscriptions: number;
  /** Coin id → active chats following it (explicitly or through a preset), most followed first, ties by id. */
  topCoins: { id: string; followers: number }[];
}

/** One stored daily snapshot (the adoption POST). `snapshotAt` wall-clock Unix s. */
export interface AdoptionSnapshot extends DayLifecycle {
  day: string;
  snapshotAt: number;
  activeWatchers: number;
  coinSubscriptions: number;
  explicitCoinSubscriptions: number;
  presetImpliedCoinSubscriptions: number;
  activePresetFollowers: number;
}

/** Mini-app counters of one UTC day. `openToFirstMutationP50Sec` null without samples. */
export interface MiniAppDay {
  sessions: number;
  mutations: number;
  denied: number;
  replayClaims: number;
  openToFirstMutationSamples: number;
  openToFirstMutationP50Sec: number | null;
}

/** UTC day `YYYY-MM-DD` of a Unix second. */
export const utcDay = (sec: number) => new Date(sec * 1000).toISOString().slice(0, 10);
/** Unix second starting the UTC day of `sec`. */
export const dayStart = (sec: number) => sec - (((sec % 86400) + 86400) % 86400);

const n = (v: unknown) => Number(v ?? 0);
const ACTIVE_SQL = "select chat_id from telegram_chats where active";

/** The bot's state-store tables and queries; implements the alert dispatcher's {@link FollowerLookup}. */
export class TelegramStore implements FollowerLookup {
  private schemaReady: Promise<void> | null = null;

  constructor(private readonly sql: SqlClient) {}

  /** Creates the tables (memoised; retried after a failure). @throws TelegramStoreError */
  ensureSchema(): Promise<void> {
    this.schemaReady ??= (async () => {
      for (const stmt of SCHEMA) await this.sql.query(stmt);
    })().catch((err: unknown) => {
      this.schemaReady = null;
      throw new TelegramStoreError("schema", err);
    });
    return this.schemaReady;
  }

  private async q<T = Record<string, unknown>>(operation: string, text: string, params: unknown[] = []): Promise<T[]> {
    await this.ensureSchema();
    try {
      return (await this.sql.query<T>(text, params)).rows;
    } catch (err) {
      throw new TelegramStoreError(operation, err);
    }
  }

  /**
   * Opts a chat in (a command, the mini-app's first mutation, the bot added back): inserts it active
   * (`new`) or reactivates an inactive one (`reactivated`), recording the lifecycle event in the same
   * statement; an active chat is `unchanged`. With `unlessBlocked`, a chat inactive because it blocked
   * the bot stays inactive (the mini-app cannot tell Telegram lifted the block).
   */
  async activate(
    chatId: string,
    chatType: string,
    at: number,
    opts: { unlessBlocked?: boolean } = {},
  ): Promise<Activation> {
    const rows = await this.q<{ kind: string }>(
      "activate",
      `
      with prev as (select active from telegram_chats where chat_id = $1::bigint),
      up as (
        insert into telegram_chats (chat_id, chat_type, active, inactive_reason, created_at, updated_at) values ($1::bigint, $2, true, null, $3, $3)
        on conflict (chat_id) do update set active = true, inactive_reason = null, updated_at = excluded.updated_at
          where not telegram_chats.active and ($4::boolean is not true or telegram_chats.inactive_reason is distinct from 'blocked')
        returning chat_id
      ),
      ev as (
        insert into telegram_chat_events (chat_id, kind, at)
        select chat_id, case when exists (select 1 from prev) then 'reactivate' else 'new' end, $3 from up
        returning kind
      )
      select kind from ev`,
      [chatId, chatType, at, opts.unlessBlocked === true],
    );
    const kind = rows[0]?.kind;
    return kind === "new" ? "new" : kind === "reactivate" ? "reactivated" : "unchanged";
  }

  /** Marks an active chat inactive (`/stop`, blocked, removed) with a `churn` event; false when it was not active (or unknown). */
  async deactivate(chatId: string, reason: InactiveReason, at: number): Promise<boolean> {
    const rows = await this.q(
      "deactivate",
      `
      with up as (
        update telegram_chats set active = false, inactive_reason = $2, updated_at = $3 where chat_id = $1::bigint and active returning chat_id
      )
      insert into telegram_chat_events (chat_id, kind, at) select chat_id, 'churn', $3 from up returning chat_id`,
      [chatId, reason, at],
    );
    return rows.length > 0;
  }

  /** The stored chat, or null. */
  async chat(chatId: string): Promise<ChatRecord | null> {
    const rows = await this.q<{
      chat_id: string;
      chat_type: string;
      active: boolean;
      inactive_reason: InactiveReason | null;
      created_at: string | number;
    }>(
      "chat",
      "select chat_id::text as chat_id, chat_type, active, inactive_reason, created_at from telegram_chats where chat_id = $1::bigint",
      [chatId],
    );
    const r = rows[0];
    return r
      ? {
          chatId: r.chat_id,
          chatType: r.chat_type,
          active: r.active,
          inactiveReason: r.inactive_reason,
          createdAt: n(r.created_at),
        }
      : null;
  }

  /** Adds follows (idempotent); returns how many were new. */
  async follow(chatId: string, kind: "coin" | "preset", targets: readonly string[], at: number): Promise<number> {
    if (targets.length === 0) return 0;
    const rows = await this.q(
      "follow",
      `
      insert into telegram_follows (chat_id, kind, target, created_at) select $1::bigint, $2, t, $4 from unnest($3::text[]) as t
      on conflict do nothing returning target`,
      [chatId, kind, [...targets], at],
    );
    return rows.length;
  }

  /** Removes follows; returns how many existed. */
  async unfollow(chatId: string, kind: "coin" | "preset", targets: readonly string[]): Promise<number> {
    if (targets.length === 0) return 0;
    const rows = await this.q(
      "unfollow",
      "delete from telegram_follows where chat_id = $1::bigint and kind = $2 and target = any($3::text[]) returning target",
      [chatId, kind, [...targets]],
    );
    return rows.length;
  }

  /** What a chat follows explicitly (active or not). */
  async follows(chatId: string): Promise<ChatFollows> {
    const rows = await this.q<{ kind: string; target: string }>(
      "follows",
      "select kind, target from telegram_follows where chat_id = $1::bigint order by kind, target",
      [chatId],
    );
    return {
      coins: rows.filter((r) => r.kind === "coin").map((r) => r.target),
      presets: rows.filter((r) => r.kind === "preset").map((r) => r.target),
    };
  }

  /**
   * FollowerLookup: coin id → active chat ids (decimal strings, ascending) following it explicitly or
   * through a preset, for each of `coinIds` with at least one follower.
   */
  async followersOf(coinIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (coinIds.length === 0) return out;
    const { names, coins } = presetPairs(coinIds);
    const rows = await this.q<{ coin: string; chat_id: string }>(
      "followersOf",
      `
      with presets as (select * from unnest($2::text[], $3::text[]) as p(name, coin)),
      pairs as (
        select f.target as coin, f.chat_id from telegram_follows f where f.kind = 'coin' and f.target = any($1::text[])
        union
        select p.coin, f.chat_id from telegram_follows f join presets p on p.name = f.target where f.kind = 'preset'
      )
      select pairs.coin, pairs.chat_id::text as chat_id from pairs join telegram_chats c on c.chat_id = pairs.chat_id
      where c.active order by pairs.coin, pairs.chat_id`,
      [[...coinIds], names, coins],
    );
    for (const r of rows) out.set(r.coin, [...(out.get(r.coin) ?? []), r.chat_id]);
    return out;
  }

  /** Number of chats ever stored (active or not): health's `totalChats`. */
  async totalChats(): Promise<number> {
    const rows = await this.q<{ c: string }>("totalChats", "select count(*) as c from telegram_chats");
    return n(rows[0]?.c);
  }

  /**
   * Subscription totals over active chats: coin subscriptions are distinct (chat, coin) pairs;
   * explicit ones are follows of a coin, preset-implied ones come from a followed preset and are not
   * also followed explicitly (so explicit + implied = all pairs). `universe`: every coin id the `all`
   * preset implies (the catalog). `topN` coins by followers.
   */
  async subscriptionTotals(universe: readonly string[], topN: number): Promise<SubscriptionTotals> {
    const { names, coins } = presetPairs(universe);
    const [totals] = await this.q<Record<string, string>>(
      "subscriptionTotals",
      `
      with active as (${ACTIVE_SQL}),
      presets as (select * from unnest($1::text[], $2::text[]) as p(name, coin)),
      explicit as (select f.chat_id, f.target as coin from telegram_follows f join active a using (chat_id) where f.kind = 'coin'),
      implied as (
        select distinct f.chat_id, p.coin from telegram_follows f join active a using (chat_id) join presets p on p.name = f.target where f.kind = 'preset'
      )
      select (select count(*) from active) as active_watchers,
             (select count(distinct f.chat_id) from telegram_follows f join active a using (chat_id) where f.kind = 'preset') as active_preset_followers,
             (select count(*) from explicit) as explicit,
             (select count(*) from implied i where not exists (select 1 from explicit e where e.chat_id = i.chat_id and e.coin = i.coin)) as implied`,
      [names, coins],
    );
    const top = await this.q<{ coin: string; c: string }>(
      "topCoins",
      `
      with active as (${ACTIVE_SQL}),
      presets as (select * from unnest($1::text[], $2::text[]) as p(name, coin)),
      pairs as (
        select f.chat_id, f.target as coin from telegram_follows f join active a using (chat_id) where f.kind = 'coin'
        union
        select f.chat_id, p.coin from telegram_follows f join active a using (chat_id) join presets p on p.name = f.target where f.kind = 'preset'
      )
      select coin, count(*) as c from pairs group by coin order by count(*) desc, coin limit $3`,
      [names, coins, topN],
    );
    return {
      activeWatchers: n(totals?.active_watchers),
      activePresetFollowers: n(totals?.active_preset_followers),
      explicitCoinSubscriptions: n(totals?.explicit),
      presetImpliedCoinSubscriptions: n(totals?.implied),
      topCoins: top.map((r) => ({ id: r.coin, followers: n(r.c) })),
    };
  }

  /** Watcher lifecycle of the UTC day holding `at`: distinct chats with a `new`, `churn`, `reactivate` event that day. */
  async lifecycle(at: number): Promise<DayLifecycle> {
    const from = dayStart(at);
    const [r] = await this.q<Record<string, string>>(
      "lifecycle",
      `
      select count(distinct chat_id) filter (where kind = 'new') as new_watchers,
             count(distinct chat_id) filter (where kind = 'churn') as churned,
             count(distinct chat_id) filter (where kind = 'reactivate') as reactivated
      from telegram_chat_events where at >= $1 and at < $2`,
      [from, from + 86400],
    );
    return { newWatchers: n(r?.new_watchers), churnedWatchers: n(r?.churned), reactivatedWatchers: n(r?.reactivated) };
  }

  /** Adds 1 to a per-day counter of the day holding `at`. */
  async bump(name: CounterName, at: number): Promise<void> {
    await this.q(
      "bump",
      `
      insert into telegram_counters (day, name, value) values ($1, $2, 1)
      on conflict (day, name) do update set value = telegram_counters.value + 1`,
      [utcDay(at), name],
    );
  }

  /** Records a mini-app launch (its init data hash) the first time its session opens; later sessions of the same launch change nothing. */
  async openLaunch(initHash: string, userId: string, at: number): Promise<void> {
    await this.q(
      "openLaunch",
      `
      insert into telegram_mini_app_launches (init_hash, user_id, opened_at) values ($1, $2::bigint, $3) on conflict (init_hash) do nothing`,
      [initHash, userId, at],
    );
  }

  /** Stamps the first mutation of a launch (no-op when its session never opened or it already mutated). */
  async markFirstMutation(initHash: string, at: number): Promise<void> {
    await this.q(
      "markFirstMutation",
      "update telegram_mini_app_launches set first_mutation_at = $2 where init_hash = $1 and first_mutation_at is null",
      [initHash, at],
    );
  }

  /** Claims `(initHash, requestId)` for a mutation: true the first time, false for a replay. */
  async claimRequest(initHash: string, requestId: string, at: number): Promise<boolean> {
    const rows = await this.q(
      "claimRequest",
      `
      insert into telegram_mini_app_requests (init_hash, request_id, at) values ($1, $2, $3) on conflict do nothing returning request_id`,
      [initHash, requestId, at],
    );
    return rows.length > 0;
  }

  /** Releases a claim whose mutation failed (the client may retry with the same requestId). */
  async releaseRequest(initHash: string, requestId: string): Promise<void> {
    await this.q("releaseRequest", "delete from telegram_mini_app_requests where init_hash = $1 and request_id = $2", [
      initHash,
      requestId,
    ]);
  }

  /** Mini-app counters of the UTC day holding `at` (sessions = launches opened that day). */
  async miniAppDay(at: number): Promise<MiniAppDay> {
    const from = dayStart(at);
    const counters = await this.q<{ name: CounterName; value: string }>(
      "miniAppDay",
      "select name, value from telegram_counters where day = $1",
      [utcDay(at)],
    );
    const c = (name: CounterName) => n(counters.find((r) => r.name === name)?.value);
    const [l] = await this.q<Record<string, string | null>>(
      "miniAppLaunches",
      `
      select count(*) as sessions, count(first_mutation_at) as samples,
             percentile_cont(0.5) within group (order by first_mutation_at - opened_at) filter (where first_mutation_at is not null) as p50
      from telegram_mini_app_launches where opened_at >= $1 and opened_at < $2`,
      [from, from + 86400],
    );
    return {
      sessions: n(l?.sessions),
      mutations: c("mini_app_mutations"),
      denied: c("mini_app_denied"),
      replayClaims: c("mini_app_replay_claims"),
      openToFirstMutationSamples: n(l?.samples),
      openToFirstMutationP50Sec: l?.p50 === null || l?.p50 === undefined ? null : Number(l.p50),
    };
  }

  /** Stores (or replaces) the snapshot of its day. */
  async saveSnapshot(s: AdoptionSnapshot): Promise<void> {
    await this.q(
      "saveSnapshot",
      `
      insert into telegram_adoption_snapshots (day, snapshot_at, active_watchers, new_watchers, churned_watchers, reactivated_watchers,
        coin_subscriptions, explicit_coin_subscriptions, preset_implied_coin_subscriptions, active_preset_followers)
      values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
      on conflict (day) do update set snapshot_at = excluded.snapshot_at, active_watchers = excluded.active_watchers, new_watchers = excluded.new_watchers,
        churned_watchers = excluded.churned_watchers, reactivated_watchers = excluded.reactivated_watchers, coin_subscriptions = excluded.coin_subscriptions,
        explicit_coin_subscriptions = excluded.explicit_coin_subscriptions, preset_implied_coin_subscriptions = excluded.preset_implied_coin_subscriptions,
        active_preset_followers = excluded.active_preset_followers`,
      [
        s.day,
        s.snapshotAt,
        s.activeWatchers,
        s.newWatchers,
        s.churnedWatchers,
        s.reactivatedWatchers,
        s.coinSubscriptions,
        s.explicitCoinSubscriptions,
        s.presetImpliedCoinSubscriptions,
        s.activePresetFollowers,
      ],
    );
  }

  /** Snapshots of days `fromDay` … `toDay` (inclusive, `YYYY-MM-DD`), ascending, and the newest snapshot time of any day (null: none). */
  async snapshots(fromDay: string, toDay: string): Promise<{ rows: AdoptionSnapshot[]; latestAt: number | null }> {
    const rows = await this.q<Record<string, string | number>>(
      "snapshots",
      "select * from telegram_adoption_snapshots where day >= $1 and day <= $2 order by day",
      [fromDay, toDay],
    );
    const [latest] = await this.q<{ m: string | null }>(
      "latestSnapshot",
      "select max(snapshot_at) as m from telegram_adoption_snapshots",
    );
    return {
      rows: rows.map((r) => ({
        day: String(r.day),
        snapshotAt: n(r.snapshot_at),
        activeWatchers: n(r.active_watchers),
        newWatchers: n(r.new_watchers),
        churnedWatchers: n(r.churned_watchers),
        reactivatedWatchers: n(r.reactivated_watchers),
        coinSubscriptions: n(r.coin_subscriptions),
        explicitCoinSubscriptions: n(r.explicit_coin_subscriptions),
        presetImpliedCoinSubscriptions: n(r.preset_implied_coin_subscriptions),
        activePresetFollowers: n(r.active_preset_followers),
      })),
      latestAt: latest?.m === null || latest?.m === undefined ? null : n(latest.m),
    };
  }

  /**
   * Deletes what the pulse no longer reads: replay claims older than `requestsBefore` (their init data
   * has expired, so a replay is refused as expired anyway), launches and lifecycle events older than
   * `historyBefore`. Snapshots are kept.
   */
  async prune(requestsBefore: number, historyBefore: number): Promise<void> {
    await this.q("pruneRequests", "delete from telegram_mini_app_requests where at < $1", [requestsBefore]);
    await this.q("pruneLaunches", "delete from telegram_mini_app_launches where opened_at < $1", [historyBefore]);
    await this.q("pruneEvents", "delete from telegram_chat_events where at < $1", [historyBefore]);
    await this.q("pruneCounters", "delete from telegram_counters where day < $1", [utcDay(historyBefore)]);
  }
}
