import type { SqlClient } from "./key-store.ts";
import { schemaOnce } from "./sql-schema.ts";

/**
 * Discovery candidates (spec 4.5): coins the upstream list carries that the registry does not — the
 * build publishes them in `/api/stablecoins` with `unreviewed: true` and a provisional id. Operator
 * decisions live in the state store (`discovery_candidates`): when a candidate was first seen, and
 * whether and at what market cap it was dismissed. A dismissed candidate resurfaces (becomes active
 * again, dismissal cleared, `resurfacedAt` set) once its market cap reaches 10× the value at
 * dismissal; a candidate dismissed with no or zero market cap resurfaces once it has a positive one.
 */

/** Factor over the market cap at dismissal at which a dismissed candidate resurfaces. */
export const RESURFACE_FACTOR = 10;

/** An unreviewed coin of the serving build, as the discovery list needs it. */
export interface UnreviewedCoin {
  id: string;
  name: string;
  symbol: string;
  pegType: string;
  pegMechanism: string;
  /** USD circulating supply (the list's `circulating[pegType]`), null when unknown. */
  marketCapUsd: number | null;
  chains: string[];
}

/** One candidate as `GET /api/discovery-candidates` lists it. Times Unix s. */
export interface DiscoveryCandidate extends UnreviewedCoin {
  status: "active" | "dismissed";
  firstSeenAt: number;
  dismissedAt: number | null;
  marketCapAtDismissalUsd: number | null;
  /** Market cap at which a dismissed candidate comes back (10× the value at dismissal), null when active. */
  resurfacesAtUsd: number | null;
  resurfacedAt: number | null;
}

const SCHEMA = `
create table if not exists discovery_candidates (
  id text primary key,
  first_seen_at bigint not null,
  dismissed_at bigint,
  dismissed_market_cap_usd double precision,
  resurfaced_at bigint
)`;

type Row = {
  id: string;
  first_seen_at: string | number;
  dismissed_at: string | number | null;
  dismissed_market_cap_usd: number | null;
  resurfaced_at: string | number | null;
};

/** Whether a candidate dismissed at `atDismissal` comes back at market cap `now`. */
export function resurfaces(atDismissal: number | null, now: number | null): boolean {
  if (now === null || !(now > 0)) return false;
  return now >= RESURFACE_FACTOR * (atDismissal ?? 0);
}

const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** Operator decisions on discovery candidates, in the state store. */
export class DiscoveryStore {
  private readonly ready: () => Promise<void>;

  constructor(
    private readonly sql: SqlClient,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.ready = schemaOnce(sql, SCHEMA);
  }

  /**
   * The candidates of `coins` (the serving build's unreviewed coins) with their decisions: records
   * first sightings, applies the resurface rule (persisting it), sorted by market cap (unknown last)
   * then id.
   */
  async candidates(coins: UnreviewedCoin[]): Promise<DiscoveryCandidate[]> {
    await this.ready();
    const now = Math.floor(this.nowMs() / 1000);
    if (coins.length === 0) return [];
    // Scalar parameters only (PGlite and node-postgres alike); the table holds one row per coin ever listed.
    const { rows } = await this.sql.query<Row>(
      "select id, first_seen_at, dismissed_at, dismissed_market_cap_usd, resurfaced_at from discovery_candidates",
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const c of coins) {
      if (byId.has(c.id)) continue;
      await this.sql.query(
        "insert into discovery_candidates (id, first_seen_at) values ($1, $2) on conflict (id) do nothing",
        [c.id, now],
      );
      byId.set(c.id, {
        id: c.id,
        first_seen_at: now,
        dismissed_at: null,
        dismissed_market_cap_usd: null,
        resurfaced_at: null,
      });
    }
    const out: DiscoveryCandidate[] = [];
    for (const c of coins) {
      const r = byId.get(c.id);
      let dismissedAt = n(r?.dismissed_at),
        atDismissal = n(r?.dismissed_market_cap_usd),
        resurfacedAt = n(r?.resurfaced_at);
      if (dismissedAt !== null && resurfaces(atDismissal, c.marketCapUsd)) {
        const { rows: changed } = await this.sql.query(
          "update discovery_candidates set dismissed_at = null, dismissed_market_cap_usd = null, resurfaced_at = $2 where id = $1 and dismissed_at is not null returning id",
          [c.id, now],
        );
        if (changed.length) {
          dismissedAt = null;
          atDismissal = null;
          resurfacedAt = now;
        }
      }
      out.push({
        ...c,
        status: dismissedAt === null ? "active" : "dismissed",
        firstSeenAt: n(r?.first_seen_at) ?? now,
        dismissedAt,
        marketCapAtDismissalUsd: dismissedAt === null ? null : atDismissal,
        resurfacesAtUsd: dismissedAt === null ? null : RESURFACE_FACTOR * (atDismissal ?? 0),
        resurfacedAt,
      });
    }
    return out.sort(
      (a, b) => (b.marketCapUsd ?? -1) - (a.marketCapUsd ?? -1) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
  }

  /**
   * Dismisses active candidate `coin` at its current market cap. False when it is already dismissed
   * (also when another request dismissed it a moment earlier).
   */
  async dismiss(coin: UnreviewedCoin): Promise<boolean> {
    await this.ready();
    const now = Math.floor(this.nowMs() / 1000);
    const { rows } = await this.sql.query(
      `insert into discovery_candidates (id, first_seen_at, dismissed_at, dismissed_market_cap_usd) values ($1, $2, $2, $3)
       on conflict (id) do update set dismissed_at = excluded.dismissed_at, dismissed_market_cap_usd = excluded.dismissed_market_cap_usd
       where discovery_candidates.dismissed_at is null returning id`,
      [coin.id, now, coin.marketCapUsd],
    );
    return rows.length > 0;
  }
}
