/**
 * Facts of the Sky USDS token that the USDS status reader (`usds-status.ts`) calls and its published
 * artifact (`site-data/usds-status.ts`) names, without importing viem: the API process serves the
 * artifact and must not load the RPC stack. `test/unit/usds-status-contract.test.ts` checks the
 * selectors and the checksummed address against viem.
 */
export const USDS_TOKEN = "0xdC035D45d973E3EC169d2276DDab16f1e407384F";
/** Registry id of USDS. */
export const USDS_STABLECOIN_ID = "usds-sky";
/** ERC-1967 implementation slot: keccak256("eip1967.proxy.implementation") − 1. */
export const ERC1967_IMPLEMENTATION_SLOT =
  "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc" as const;
/** USDS implementation without a freeze function (as the reference records it), lowercase. */
export const USDS_NO_FREEZE_IMPLEMENTATION = "0x1923dfee706a8e78157416c29cbccfde7cdf4102";
/** Argument of the freeze probe: the zero address (a capability probe, not an account check). */
export const FREEZE_PROBE_ARG = "0x0000000000000000000000000000000000000000";
/** 4-byte selectors: keccak256 of `isBlocked(address)` and `totalSupply()`. */
export const IS_BLOCKED_SELECTOR = "0xfbac3951";
export const TOTAL_SUPPLY_SELECTOR = "0x18160ddd";
