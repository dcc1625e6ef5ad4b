import { z } from "zod";
import {
  ERC1967_IMPLEMENTATION_SLOT,
  FREEZE_PROBE_ARG,
  IS_BLOCKED_SELECTOR,
  TOTAL_SUPPLY_SELECTOR,
  USDS_TOKEN,
} from "../pipelines/sources/usds-status-contract.ts";
import { sqlArtifact } from "./contract.ts";

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

/** The calls behind a status, in order, all at `readAt.blockNumber` (documented in `pipelines/sources/usds/usds-status.ts`). */
export const USDS_STATUS_CALLS = [
  "eth_getBlockByNumber(block)",
  `eth_getStorageAt(token, ${ERC1967_IMPLEMENTATION_SLOT}, block)`,
  `eth_call isBlocked(${FREEZE_PROBE_ARG}) [${IS_BLOCKED_SELECTOR}]`,
  `eth_call totalSupply() [${TOTAL_SUPPLY_SELECTOR}]`,
] as const;

/**
 * `site-data/usds-status.json` — Sky USDS protocol status read on Ethereum at one block.
 * `freezeModuleActive`: the implementation behind the USDS ERC-1967 proxy answers
 * `isBlocked(address)` (the freeze/blocklist capability exists; it says nothing about any account);
 * `freezeCapabilityPresent` is the same value under the reference implementation's name.
 * `implementationAddress`: the ERC-1967 implementation slot; `knownNoFreezeImplementation`: it is
 * `0x1923…4102`, recorded without a freeze function. `freezeProbe`: the probe call and its outcome
 * (`answered` with `result`, or `reverted` with `reason`). `totalSupplyRaw`: base units (18 decimals) as
 * decimal digits. `readAt`: block number, hash and timestamp (Unix s) of the read; `updatedAt` = that
 * timestamp. `source`: how it was read (JSON-RPC providers of `BALLAST_RPC_ETHEREUM`), the calls, the
 * capture file and when it was captured (`observedAt`, Unix s).
 */
export const UsdsStatusSchema = z.object({
  stablecoinId: z.literal("usds-sky"),
  token: z.object({
    chain: z.literal("ethereum"),
    evmChainId: z.number().int(),
    address: Address,
    symbol: z.literal("USDS"),
    decimals: z.literal(18),
  }),
  freezeModuleActive: z.boolean(),
  freezeCapabilityPresent: z.boolean(),
  implementationAddress: Address,
  knownNoFreezeImplementation: z.boolean(),
  freezeProbe: z.object({
    function: z.literal("isBlocked(address)"),
    selector: z.string(),
    args: z.array(z.string()),
    outcome: z.enum(["answered", "reverted"]),
    result: z.boolean().nullable(),
    reason: z.string().nullable(),
  }),
  totalSupplyRaw: z.string().regex(/^\d+$/).nullable(),
  readAt: z.object({
    blockNumber: z.number().int().nonnegative(),
    blockHash: z.string(),
    blockTimestamp: z.number().int(),
  }),
  source: z.object({
    kind: z.literal("evm-rpc"),
    rpcEnv: z.literal("BALLAST_RPC_ETHEREUM"),
    calls: z.array(z.string()),
    capturePath: z.string(),
    observedAt: z.number().int(),
  }),
  updatedAt: z.number().int(),
});
export type UsdsStatus = z.infer<typeof UsdsStatusSchema>;

/**
 * `site-data/usds-status.json` from mart `usds_status` (cache key `usds-status`, budget 86400 s).
 * Optional: published only when the build holds a `usds.status` capture (`tsx build/cli.ts capture`
 * with `BALLAST_RPC_ETHEREUM` set); without one no file exists and `/api/usds-status` answers 503
 * `Data not yet available: usds-status` — a status is never invented.
 */
export const usdsStatusArtifact = sqlArtifact(import.meta.url, {
  key: "usds-status",
  schemaVersion: "1.0.0",
  maxAgeSec: 86_400,
  optional: true,
  description:
    "Sky USDS protocol status: freeze module, implementation, supply, read on Ethereum at one block (published once a capture exists).",
  path: "site-data/usds-status.json",
  schema: UsdsStatusSchema,
  sql: "usds_status",
  shape: "many",
  // the payload names the read's constants (selector, probe argument, calls) beside the captured values
  transform: (rows: Record<string, unknown>[]): UsdsStatus => {
    const r = rows[0];
    const blockTimestamp = Number(r.block_timestamp);
    const answered = r.probe_outcome === "answered";
    const payload: UsdsStatus = {
      stablecoinId: "usds-sky",
      token: {
        chain: "ethereum",
        evmChainId: Number(r.evm_chain_id),
        address: String(r.token).toLowerCase() === USDS_TOKEN.toLowerCase() ? USDS_TOKEN : String(r.token),
        symbol: "USDS",
        decimals: 18,
      },
      freezeModuleActive: Boolean(r.freeze_module_active),
      freezeCapabilityPresent: Boolean(r.freeze_module_active),
      implementationAddress: String(r.implementation_address),
      knownNoFreezeImplementation: Boolean(r.known_no_freeze_implementation),
      freezeProbe: {
        function: "isBlocked(address)",
        selector: IS_BLOCKED_SELECTOR,
        args: [FREEZE_PROBE_ARG],
        outcome: answered ? "answered" : "reverted",
        result: answered ? Boolean(r.probe_result) : null,
        reason: (r.probe_reason as string | null) ?? null,
      },
      totalSupplyRaw:
        r.total_supply_raw === null || r.total_supply_raw === undefined ? null : String(r.total_supply_raw),
      readAt: { blockNumber: Number(r.block_number), blockHash: String(r.block_hash), blockTimestamp },
      source: {
        kind: "evm-rpc",
        rpcEnv: "BALLAST_RPC_ETHEREUM",
        calls: [...USDS_STATUS_CALLS],
        capturePath: String(r.capture_path),
        observedAt: Number(r.observed_at),
      },
      updatedAt: blockTimestamp,
    };
    return payload;
  },
  rows: () => 1,
  dataAsOf: (status: UsdsStatus) => status.updatedAt,
});
