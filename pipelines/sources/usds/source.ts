import type { SourceDeclaration } from "../types.ts";
import { usdsStatusEndpoint } from "./usds-status.ts";

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
      payload: {
        chain: "ethereum",
        evmChainId: 1,
        token: "0xdc035d45d973e3ec169d2276ddab16f1e407384f",
        blockNumber: 1,
        blockHash: `0x${"ab".repeat(32)}`,
        blockTimestamp: 0,
        implementationSlot: "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc",
        implementationAddress: "0x1923dfee706a8e78157416c29cbccfde7cdf4102",
        freezeProbe: {
          function: "isBlocked(address)",
          args: ["0x0000000000000000000000000000000000000000"],
          outcome: "reverted",
          result: null,
          reason: "reverted",
        },
        totalSupplyRaw: "1.5e27",
      },
    },
  },
};
