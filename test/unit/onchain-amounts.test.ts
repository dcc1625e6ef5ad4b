import { describe, expect, it } from "vitest";
import { keysetPage } from "../../api/lib/keyset.ts";
import { decimalString } from "../../pipelines/onchain/contract.ts";
import { exactBaseUnits } from "../../pipelines/sources/onchain/onchain-events.ts";
import { must } from "../helpers/must.ts";

describe("exact amounts", () => {
  it("recorded amount cells become exact base units or are refused, never rounded", () => {
    expect(exactBaseUnits("30000000.0")).toBe("30000000");
    expect(exactBaseUnits("3972017929316571041737574")).toBe("3972017929316571041737574");
    expect(exactBaseUnits("1.5e+16")).toBe("15000000000000000");
    expect(exactBaseUnits("4500000000000000.0")).toBe("4500000000000000");
    expect(exactBaseUnits("1.25")).toBeNull();
    expect(exactBaseUnits("-5")).toBeNull();
    expect(exactBaseUnits("")).toBeNull();
    expect(exactBaseUnits("12abc")).toBeNull();
  });

  it("base units to token units as exact decimal text", () => {
    expect(decimalString("176213018853435", 6)).toBe("176213018.853435");
    expect(decimalString("5000000", 6)).toBe("5");
    expect(decimalString("1", 18)).toBe("0.000000000000000001");
    expect(decimalString(3972017929316571041737574n, 18)).toBe("3972017.929316571041737574");
    expect(decimalString("0", 6)).toBe("0");
    expect(() => decimalString("1.5", 6)).toThrow();
  });
});

describe("keyset paging", () => {
  const rows = Array.from({ length: 50 }, (_, i) => ({
    t: Math.floor(i / 3),
    id: `r${String(i).padStart(2, "0")}`,
    even: i % 2 === 0,
  }));
  const key = (r: (typeof rows)[number]) => [r.t, r.id];
  const walk = (direction: "asc" | "desc", keep: (r: (typeof rows)[number]) => boolean, limit: number) => {
    const out: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const p = keysetPage(rows, key, { sortName: "t", arity: 2, direction, keep, limit, cursor, includeTotal: true });
      out.push(...p.rows.map((r) => r.id));
      if (!p.nextCursor) return { out, total: p.total };
      cursor = p.nextCursor;
    }
  };
  it("walks every kept row once, in order, both directions, with ties on the first key", () => {
    const asc = walk("asc", (r) => r.even, 4);
    expect(asc.out).toEqual(rows.filter((r) => r.even).map((r) => r.id));
    expect(asc.total).toBe(25);
    const desc = walk("desc", () => true, 7);
    expect(desc.out).toEqual(rows.map((r) => r.id).reverse());
  });
  it("offset skips matching rows; a cursor of another order or with offset is refused", () => {
    const p = keysetPage(rows, key, {
      sortName: "t",
      arity: 2,
      direction: "asc",
      keep: (r) => r.even,
      limit: 2,
      offset: 3,
      includeTotal: false,
    });
    expect(p.rows.map((r) => r.id)).toEqual(["r06", "r08"]);
    const c = must(
      keysetPage(rows, key, {
        sortName: "t",
        arity: 2,
        direction: "asc",
        keep: () => true,
        limit: 2,
        includeTotal: false,
      }).nextCursor,
      "the first page's next cursor",
    );
    expect(() =>
      keysetPage(rows, key, {
        sortName: "t",
        arity: 2,
        direction: "desc",
        keep: () => true,
        limit: 2,
        cursor: c,
        includeTotal: false,
      }),
    ).toThrow(/issued for sort/);
    expect(() =>
      keysetPage(rows, key, {
        sortName: "t",
        arity: 2,
        direction: "asc",
        keep: () => true,
        limit: 2,
        cursor: c,
        offset: 1,
        includeTotal: false,
      }),
    ).toThrow(/cannot combine/);
    expect(() =>
      keysetPage(rows, key, {
        sortName: "t",
        arity: 2,
        direction: "asc",
        keep: () => true,
        limit: 2,
        cursor: "garbage",
        includeTotal: false,
      }),
    ).toThrow(/not a cursor/);
  });
});
