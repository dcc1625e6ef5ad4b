import type { SourceDeclaration } from "../types.ts";
import {
  ERC1967_IMPLEMENTATION_SLOT,
  FREEZE_PROBE_ARG,
  USDS_NO_FREEZE_IMPLEMENTATION,
  USDS_TOKEN,
  type UsdsStatusPayload,
  usdsStatusEndpoint,
} from "./usds-status.ts";

/**
 * A well-formed `usds.status` payload: block 1 (hash 0xabab…ab, timestamp 0) read at the implementation
 * known to have no freeze function, whose `isBlocked` probe reverted, supply 1.5e27 base units (1.5 bn
 * USDS). The base of the endpoint's bad-row fixture and of the e2e test's captures
 * (test/e2e/usds-status.test.ts), which set their own block and supply.
 */
export const USDS_STATUS_SAMPLE: UsdsStatusPayload = {
  chain: "ethereum",
  evmChainId: 1,
  token: USDS_TOKEN.toLowerCase(),
  blockNumber: 1,
  blockHash: `0x${"ab".repeat(32)}`,
  blockTimestamp: 0,
  implementationSlot: ERC1967_IMPLEMENTATION_SLOT,
  implementationAddress: USDS_NO_FREEZE_IMPLEMENTATION,
  freezeProbe: {
    function: "isBlocked(address)",
    args: [FREEZE_PROBE_ARG],
    outcome: "reverted",
    result: null,
    reason: "reverted",
  },
  totalSupplyRaw: "1500000000000000000000000000",
};

/**
 * The USDS status read from Ethereum over JSON-RPC (`fetchRpc`: no HTTP base URL; skipped unless
 * `BALLAST_RPC_ETHEREUM` is set). Lineage family `onchain`, so its circuit counts with the on-chain logs.
 */
export const usdsSource: SourceDeclaration = {
  kind: "source",
  name: "usds",
  endpoints: [usdsStatusEndpoint],
  livePlan: () => [{ endpoint: "usds.status", params: {} }],
  badRows: {
    "usds.status": {
      // the sample with a supply in exponent notation (not base-unit digits): the row keeps a null supply
      payload: { ...USDS_STATUS_SAMPLE, totalSupplyRaw: "1.5e27" },
    },
  },
};
