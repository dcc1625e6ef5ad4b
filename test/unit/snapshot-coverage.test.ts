import { describe, expect, it } from "vitest";
import { SECTION_COVERAGE_FLOOR, sectionCoverage, thinSections } from "../../site-data/snapshot.ts";

/** A listed coin as the snapshot reads it: price and supply present unless said otherwise, chains given. */
const coin = (i: number, over: { price?: number | null; supply?: boolean; chains?: string[] } = {}) => ({
  id: `c${i}-issuer`,
  symbol: `C${i}`,
  pegType: "peggedUSD",
  price: over.price === undefined ? 1 : over.price,
  circulating: (over.supply === false ? {} : { peggedUSD: 1e9 }) as Record<string, number>,
  chains: over.chains ?? ["Ethereum"],
});

describe("snapshot section coverage: a section under the floor names its coverage", () => {
  it("the floor is 90% of the listed coins", () => {
    expect(SECTION_COVERAGE_FLOOR).toBe(0.9);
  });

  it("9 of 10 coins is covered; 8 of 10 is thin and named with the coins it covers", () => {
    const nine = Array.from({ length: 10 }, (_, i) => coin(i, { supply: i !== 0 }));
    expect(sectionCoverage(nine).supply).toMatchObject({ covered: 9, of: 10 });
    expect(thinSections(sectionCoverage(nine))).toEqual({});
    const eight = Array.from({ length: 10 }, (_, i) => coin(i, { supply: i > 1, chains: i === 5 ? ["Tron"] : [] }));
    const cov = sectionCoverage(eight);
    expect(cov.supply).toMatchObject({
      covered: 8,
      of: 10,
      coins: ["c2-issuer", "c3-issuer", "c4-issuer", "c5-issuer", "c6-issuer", "c7-issuer", "c8-issuer", "c9-issuer"],
    });
    expect(cov.chains).toMatchObject({ covered: 1, of: 10, coins: ["c5-issuer"] });
    const thin = thinSections(cov);
    expect(Object.keys(thin).sort()).toEqual(["chains", "supply"]);
    expect(thin.chains).toBe(
      "1 of 10 listed coins have a per-chain supply breakdown (C5); the others have none as of this day: the chain tables and chain totals hold only these coins",
    );
    expect(thin.supply).toMatch(/^8 of 10 listed coins have a circulating supply \(C2, C3, C4, C5, C6, C7, C8, C9\)/);
  });

  it("a section nobody covers says so without a coin list; a price of null does not count", () => {
    const cov = sectionCoverage([coin(1, { price: null }), coin(2, { price: null })]);
    expect(cov.price).toMatchObject({ covered: 0, of: 2, coins: [] });
    expect(thinSections(cov).price).toBe(
      "0 of 2 listed coins have a current price; the others have none as of this day",
    );
  });
});
