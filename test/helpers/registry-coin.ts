import type { z } from "zod";
import { expect } from "vitest";
import { type Coin, noChainOrArchiveRecords } from "../../pipelines/registry/schema.ts";
import { must } from "./must.ts";

/**
 * A minimal curated registry record for fixtures: a fiat-backed coin whose symbol and issuer come from
 * its id (`"aaa-one"` → symbol `AAA`, issuer `one`), with no gecko id, contracts or archives unless
 * `extra` sets them.
 */
export function registryCoin(
  id: string,
  llamaId: string,
  pegType: string,
  pegCurrency: string,
  extra: Partial<Coin> = {},
): Coin {
  return {
    id,
    llamaId,
    geckoId: null,
    name: id,
    symbol: id.split("-")[0].toUpperCase(),
    issuer: id.split("-")[1],
    pegType,
    pegCurrency,
    pegMechanism: "fiat-backed",
    navToken: false,
    floatingPeg: false,
    ...noChainOrArchiveRecords(),
    provenance: ["defillama-list"],
    ...extra,
  };
}

/**
 * Asserts that a registry facts block failed to parse with one `no source cites <field>` issue per
 * field in `uncited`, in that order (a fact field that no source of the block cites).
 */
export function expectUncitedFields(parsed: z.ZodSafeParseResult<unknown>, uncited: readonly string[]): void {
  expect(parsed.success).toBe(false);
  expect(must(parsed.error, "the parse error").issues.map((i) => i.message)).toEqual(
    uncited.map((f) => `no source cites ${f}`),
  );
}
