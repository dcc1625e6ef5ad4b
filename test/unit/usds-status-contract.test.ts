import { getAddress, keccak256, toFunctionSelector, toHex } from "viem";
import { describe, expect, it } from "vitest";
import {
  ERC1967_IMPLEMENTATION_SLOT,
  IS_BLOCKED_SELECTOR,
  TOTAL_SUPPLY_SELECTOR,
  USDS_TOKEN,
} from "../../pipelines/sources/usds-status-contract.ts";

describe("USDS contract facts (viem-free module the API loads)", () => {
  it("selectors, checksummed token and the ERC-1967 slot agree with viem", () => {
    expect(IS_BLOCKED_SELECTOR).toBe(toFunctionSelector("isBlocked(address)"));
    expect(TOTAL_SUPPLY_SELECTOR).toBe(toFunctionSelector("totalSupply()"));
    expect(USDS_TOKEN).toBe(getAddress(USDS_TOKEN.toLowerCase()));
    expect(BigInt(ERC1967_IMPLEMENTATION_SLOT)).toBe(BigInt(keccak256(toHex("eip1967.proxy.implementation"))) - 1n);
  });
});
