import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Db } from "../../build/duckdb.ts";
import { loadAndModel } from "../../build/stages/model.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";

/**
 * Fresh or null, over the recorded history (issue 29 part 2): at each as-of day of the audit, no
 * current figure (supply, its FX rate, price) is older than its source's freshness window; and the
 * named cases of 2026-09-03 come from the 2026-09-02 list, not the 2025-09-07 one.
 */
const AS_OF_DAYS = ["2022-05-12", "2023-03-01", "2023-03-13", "2025-09-07", "2025-12-26", "2026-09-03"];

type Row = Record<string, unknown>;
async function withBuild<T>(iso: string, f: (db: Db) => Promise<T>): Promise<T> {
  process.env.BALLAST_LOG = "silent";
  const { db } = await loadAndModel({ asOf: Date.parse(iso) / 1000, captureDir: CAPTURE_DIR });
  try {
    return await f(db);
  } finally {
    db.close();
  }
}

describe("no current figure older than its window, at every audited as-of day", () => {
  for (const day of AS_OF_DAYS) {
    it(`as of ${day}T00:00Z`, async () => {
      await withBuild(`${day}T00:00:00Z`, async (db) => {
        // supply: a daily point at most 3 days old (its window), or the day of a list at most 2 days old
        const staleSupply = await db.all<Row>(
          `select s.stablecoin_id, s.supply_date::varchar as supply_date, s.supply_source
           from stablecoins s cross join build_context c
           left join int_coins_supply_usd u on u.stablecoin_id = s.stablecoin_id
           where s.circulating_usd is not null
             and (c.as_of - epoch(s.supply_date) > 3 * 86400
               or (s.supply_mode = 'list' and c.as_of - u.list_observed_at > 2 * 86400))`,
        );
        expect(staleSupply).toEqual([]);
        // chain amounts share their coin's current day, so they are as fresh as it
        const staleChains = await db.all<Row>(
          `select ch.stablecoin_id, ch.chain_id from stablecoin_chain_supply ch cross join build_context c
           where c.as_of - epoch(ch.date) > 3 * 86400`,
        );
        expect(staleChains).toEqual([]);
        // an ECB rate valuing current supply as `fx` is at most 4 days older than the supply's day
        const staleFx = await db.all<Row>(
          "select stablecoin_id, fx_rate_age_days from stablecoins where valuation_basis = 'fx' and fx_rate_age_days > 4",
        );
        expect(staleFx).toEqual([]);
        // a current price was observed at most 48 h (two daily periods) before as-of
        const stalePrice = await db.all<Row>(
          `select stablecoin_id, price_observed_at from stablecoins cross join build_context c
           where price is not null and c.as_of - price_observed_at > 2 * 86400`,
        );
        expect(stalePrice).toEqual([]);
        // a null current supply always says why
        const unexplained = await db.all<Row>(
          "select stablecoin_id from stablecoins where circulating_usd is null and supply_unavailable_reason is null",
        );
        expect(unexplained).toEqual([]);
      });
    }, 120_000);
  }
});

describe("as of 2026-09-03: the 2026-09-02 list, not the 2025-09-07 one", () => {
  it("publishes USDT, USDe and USDG from the 2026-09-02 list (units = USD value / the list's price, at par)", async () => {
    const raw = JSON.parse(
      readFileSync(join(CAPTURE_DIR, "conorscode-open-defi-data/stablecoins.2026-09-02.json"), "utf8"),
    ) as { id: string; circulatingUsd: number | null; price: number | null }[];
    const expected = (llamaId: string) => {
      const r = raw.find((x) => x.id === llamaId);
      if (!r?.circulatingUsd || !r.price) throw new Error(`no list value for ${llamaId}`);
      return r.circulatingUsd / r.price;
    };
    await withBuild("2026-09-03T00:00:00Z", async (db) => {
      const rows = await db.all<{ stablecoin_id: string; circulating_usd: number; supply_source: string }>(
        `select stablecoin_id, circulating_usd, supply_source, supply_date::varchar as supply_date from stablecoins
         where stablecoin_id in ('usdt-tether', 'usde-ethena', 'usdg-paxos') order by stablecoin_id`,
      );
      const by = Object.fromEntries(rows.map((r) => [r.stablecoin_id, r]));
      expect(by["usdt-tether"]).toMatchObject({ supply_source: "defillama", supply_date: "2026-09-02" });
      expect(by["usdt-tether"].circulating_usd).toBeCloseTo(expected("1"), 0); // 183.42 B (list: 183.35 B at 0.99961)
      expect(by["usde-ethena"].circulating_usd).toBeCloseTo(expected("146"), 0); // 4.23 B (2025-09-07 list: 12.78 B)
      expect(by["usdg-paxos"].circulating_usd).toBeCloseTo(expected("286"), 0); // 3.16 B (2025-09-07 list: 0.54 B)
      // non-USD pegs: the list carries no supply for them; their older points are past their window
      const [eurc] = await db.all<Row>(
        "select circulating_usd, supply_unavailable_reason from stablecoins where stablecoin_id = 'eurc-circle'",
      );
      expect(eurc.circulating_usd).toBeNull();
      expect(["stale-beyond-window", "no-observation"]).toContain(eurc.supply_unavailable_reason);
    });
  }, 120_000);
});
