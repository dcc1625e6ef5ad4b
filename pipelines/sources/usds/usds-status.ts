import { type Abi, getAddress, parseAbi } from "viem";
import { z } from "zod";
import type { EvmRpc } from "../evm-rpc.ts";
import { RowCollector } from "../parse-helpers.ts";
import {
  ERC1967_IMPLEMENTATION_SLOT,
  FREEZE_PROBE_ARG,
  USDS_NO_FREEZE_IMPLEMENTATION,
  USDS_STABLECOIN_ID,
  USDS_TOKEN,
} from "../usds-status-contract.ts";

export { ERC1967_IMPLEMENTATION_SLOT, FREEZE_PROBE_ARG, USDS_NO_FREEZE_IMPLEMENTATION, USDS_STABLECOIN_ID, USDS_TOKEN };
import type { Capture, Endpoint, RowSink, SourceLineage, SourceTime } from "../types.ts";

/**
 * Sky USDS protocol status, read from Ethereum over JSON-RPC (viem; providers `BALLAST_RPC_ETHEREUM`,
 * see `evm-rpc.ts`). USDS (`0xdC035D45d973E3EC169d2276DDab16f1e407384F`) is a UUPS / ERC-1967 proxy.
 * What the leading public implementation reads (Pharos `worker/src/cron/sync-usds-status.ts`): the
 * ERC-1967 implementation slot, compared with the implementation known to have no freeze function,
 * and, when it differs, a probe call `isBlocked(address(0))` — a 32-byte answer proves the
 * implementation exposes the blocklist/freeze capability (it says nothing about any account).
 *
 * The calls this reader makes, all pinned to one block (default: the safe head, latest − 12):
 * 1. `eth_getBlockByNumber(block)` — block hash and timestamp;
 * 2. `eth_getStorageAt(USDS, 0x360894a1…382bbc, block)` — the implementation address (last 20 bytes);
 * 3. `eth_call isBlocked(0x0000…0000)` (selector `0xfbac3951`) via viem `readContract` — answered (freeze
 *    module active) or reverted / no data (no freeze function in the implementation); always made,
 *    whatever the implementation;
 * 4. `eth_call totalSupply()` via `readContract` — supply in base units (18 decimals).
 * A transport failure on every provider throws (nothing is captured, the previous capture stays in
 * force); a revert is an answer of the chain and is recorded as such.
 */
/** Functions called on the proxy. */
export const USDS_ABI: Abi = parseAbi([
  "function isBlocked(address) view returns (bool)",
  "function totalSupply() view returns (uint256)",
]);
/** An on-chain read of the Ethereum node itself: a primary family of its own. */
export const USDS_LINEAGE: SourceLineage = { family: "onchain", derivedFrom: null };
export const USDS_TIME: SourceTime = { zone: "UTC", dailyBucket: "snapshot at the read block's timestamp (Unix s)" };

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

/**
 * One capture (`raw/usds/<day>/usds.status-<observedAt>.json.gz`): what the chain answered at one block.
 * `blockNumber` and `blockTimestamp` are integers (Unix s); `totalSupplyRaw` base units as decimal digits;
 * `freezeProbe.outcome` `answered` (with `result`) or `reverted` (with `reason`).
 */
export const UsdsStatusPayloadSchema = z.object({
  chain: z.literal("ethereum"),
  evmChainId: z.number().int(),
  token: Address,
  blockNumber: z.number().int().nonnegative(),
  blockHash: z.string().regex(/^0x[0-9a-f]{64}$/),
  blockTimestamp: z.number().int().nonnegative(),
  implementationSlot: z.string(),
  implementationAddress: Address,
  freezeProbe: z.object({
    function: z.literal("isBlocked(address)"),
    args: z.array(z.string()),
    outcome: z.enum(["answered", "reverted"]),
    result: z.boolean().nullable(),
    reason: z.string().nullable(),
  }),
  totalSupplyRaw: z.string().regex(/^\d+$/).nullable(),
});
export type UsdsStatusPayload = z.infer<typeof UsdsStatusPayloadSchema>;

/**
 * Reads the USDS status through `rpc` (chain `ethereum`, EVM chain id checked to be `evmChainId`,
 * default 1) at `blockNumber` (default the safe head). Throws RpcUnavailableError when a call fails on
 * every provider, or an Error when the block is unknown to the providers.
 */
export async function readUsdsStatus(
  rpc: EvmRpc,
  opts: { blockNumber?: bigint; token?: string; evmChainId?: number } = {},
): Promise<UsdsStatusPayload> {
  const chain = "ethereum";
  const evmChainId = opts.evmChainId ?? 1;
  const token = getAddress(opts.token ?? USDS_TOKEN);
  rpc.expectChainId(chain, evmChainId);
  const block = opts.blockNumber ?? (await rpc.safeHead(chain));
  const header = await rpc.blockHeader(chain, block);
  if (!header) throw new Error(`usds-status: block ${block} unknown to the ethereum providers`);
  const word = await rpc.storageAt(chain, token, ERC1967_IMPLEMENTATION_SLOT, block);
  const implementationAddress = `0x${word.slice(-40)}`.toLowerCase();
  const probe = await rpc.tryReadContract<boolean>(chain, {
    address: token,
    abi: USDS_ABI,
    functionName: "isBlocked",
    args: [FREEZE_PROBE_ARG],
    blockNumber: block,
  });
  const supply = await rpc.tryReadContract<bigint>(chain, {
    address: token,
    abi: USDS_ABI,
    functionName: "totalSupply",
    blockNumber: block,
  });
  return UsdsStatusPayloadSchema.parse({
    chain,
    evmChainId,
    token: token.toLowerCase(),
    blockNumber: Number(block),
    blockHash: header.hash,
    blockTimestamp: header.timestamp,
    implementationSlot: ERC1967_IMPLEMENTATION_SLOT,
    implementationAddress,
    freezeProbe: {
      function: "isBlocked(address)",
      args: [FREEZE_PROBE_ARG],
      outcome: probe.outcome,
      result: probe.outcome === "answered" ? probe.result : null,
      reason: probe.outcome === "reverted" ? probe.reason : null,
    },
    totalSupplyRaw: supply.outcome === "answered" ? supply.result.toString() : null,
  });
}

/** Envelope of a capture: an object (its fields are checked by `toRows`, a bad supply value costs only itself). */
const UsdsStatusEnvelope = z.looseObject({});

/** Row of `raw_usds__status`: one per capture. */
const StatusRow = z.object({
  token: Address,
  evm_chain_id: z.number().int(),
  block_number: z.number().int().nonnegative(),
  block_hash: z.string(),
  block_timestamp: z.number().int().nonnegative(),
  implementation_address: Address,
  probe_outcome: z.enum(["answered", "reverted"]),
  probe_result: z.boolean().nullable(),
  probe_reason: z.string().nullable(),
  total_supply_raw: z.string().regex(/^\d+$/).nullable(),
  observed_at: z.number().int(),
  capture_path: z.string(),
});

/**
 * `usds.status` — snapshot mode: the newest capture observed at or before as-of is the current status.
 * Captures are written by `tsx build/cli.ts capture` when `BALLAST_RPC_ETHEREUM` is set (no recorded
 * capture exists, so the default build publishes no status). A capture whose block is later than its
 * observation time is dropped (`block-after-observation`), so is a status failing UsdsStatusPayloadSchema
 * (`status-invalid`); a malformed `totalSupplyRaw` costs only itself (null, `total-supply-invalid`).
 */
export const usdsStatusEndpoint: Endpoint = {
  key: "usds.status",
  source: "usds",
  lineage: USDS_LINEAGE,
  time: USDS_TIME,
  mode: "snapshot",
  maxStalenessSec: 2 * 86400,
  payloadSchema: UsdsStatusEnvelope,
  rowSchema: StatusRow,
  table: {
    name: "raw_usds__status",
    columns: {
      token: "VARCHAR",
      evm_chain_id: "BIGINT",
      block_number: "BIGINT",
      block_hash: "VARCHAR",
      block_timestamp: "BIGINT",
      implementation_address: "VARCHAR",
      probe_outcome: "VARCHAR",
      probe_result: "BOOLEAN",
      probe_reason: "VARCHAR",
      total_supply_raw: "HUGEINT",
      observed_at: "BIGINT",
      capture_path: "VARCHAR",
    },
  },
  fetchRpc: { chain: "ethereum", fetch: (rpc) => readUsdsStatus(rpc) },
  toRows(payload: Record<string, unknown>, capture: Capture, out?: RowSink) {
    const rc = new RowCollector(StatusRow, out);
    const parsed = UsdsStatusPayloadSchema.extend({ totalSupplyRaw: z.unknown() }).safeParse(payload);
    if (!parsed.success) {
      rc.drop("status-invalid");
      return rc.result();
    }
    const supply = UsdsStatusPayloadSchema.shape.totalSupplyRaw.safeParse(parsed.data.totalSupplyRaw ?? null);
    if (!supply.success) rc.drop("total-supply-invalid");
    const p = { ...parsed.data, totalSupplyRaw: supply.success ? supply.data : null };
    if (p.blockTimestamp > capture.observedAt) {
      rc.drop("block-after-observation");
      return rc.result();
    }
    rc.add({
      token: p.token.toLowerCase(),
      evm_chain_id: p.evmChainId,
      block_number: p.blockNumber,
      block_hash: p.blockHash,
      block_timestamp: p.blockTimestamp,
      implementation_address: p.implementationAddress.toLowerCase(),
      probe_outcome: p.freezeProbe.outcome,
      probe_result: p.freezeProbe.result,
      probe_reason: p.freezeProbe.reason,
      total_supply_raw: p.totalSupplyRaw,
      observed_at: capture.observedAt,
      capture_path: capture.path,
    });
    return rc.result();
  },
};
