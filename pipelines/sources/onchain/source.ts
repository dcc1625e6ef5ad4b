import { utcDayStart } from "../time.ts";
import type { RecordedCapture, SourceDeclaration } from "../types.ts";
import { onchainEventsEndpoint, readBhemenUsdpCsv, readBhemenUsdtCsv, readPyusdSupplyCsv } from "./onchain-events.ts";
import { onchainSupplySamplesArchive, readTotalSupplySampleCsv } from "./supply-samples.ts";

/**
 * On-chain records, archive only here (the live mint/burn lane writes the ledger, not captures):
 * BNB-chain `totalSupply()` samples and decoded USDT/USDP/PYUSD logs (observedAt = the recording's
 * commit date; rows count from their block time).
 */
export const onchainSource: SourceDeclaration = {
  kind: "source",
  name: "onchain",
  endpoints: [onchainSupplySamplesArchive, onchainEventsEndpoint],
  recorded: [
    ...["BSC-USD", "BUSD", "FDUSD", "USDC"].map(
      (f): RecordedCapture => ({
        endpoint: "onchain.total_supply_samples",
        file: `bhemen-crypto-insights/bnb-supply/${f}.csv`,
        observedAt: utcDayStart("2025-01-24"),
        time: { zone: "UTC", dailyBucket: "intraday sample; date = UTC day of block time" },
        read: readTotalSupplySampleCsv("bsc", 18),
      }),
    ),
    {
      endpoint: "onchain.events",
      file: "bhemen-usdt/usdt_configs.csv",
      observedAt: utcDayStart("2023-07-11"),
      time: onchainEventsEndpoint.time,
      read: readBhemenUsdtCsv,
    },
    {
      endpoint: "onchain.events",
      file: "bhemen-paxos-coins/usdp_configs.csv",
      observedAt: utcDayStart("2022-11-20"),
      time: onchainEventsEndpoint.time,
      read: readBhemenUsdpCsv,
    },
    {
      endpoint: "onchain.events",
      file: "bhemen-crypto-insights/pyusd/pyusd_supply_events.csv",
      observedAt: utcDayStart("2025-11-15"),
      time: onchainEventsEndpoint.time,
      read: readPyusdSupplyCsv,
    },
  ],
  badRows: {
    "onchain.total_supply_samples": {
      payload: {
        chainId: "bsc",
        decimals: 18,
        rows: [
          { address: "0xa", symbol: "USDC", block: "1", supply: "10", ts: "2025-01-04 06:28:49" },
          { address: "0xa", __parsed_extra: ["x"] },
        ],
      },
    },
    "onchain.events": {
      payload: {
        rows: [
          {
            id: `ethereum-0x${"ab".repeat(32)}-3`,
            chain_id: "ethereum",
            stablecoin_id: "usdt-tether",
            config_key: "usdt-tether:ethereum:0xdac17f958d2ee523a2206206994597c13d831ec7:tether-legacy-blacklist",
            contract_address: "0xdac17f958d2ee523a2206206994597c13d831ec7",
            family: "tether-legacy-blacklist",
            event_name: "DestroyedBlackFunds",
            event_signature: "DestroyedBlackFunds(address,uint256)",
            topic0: null,
            kind: "destroy",
            address: "0x9faf5515f177f3a8a845d48c19032b33cc54c09c",
            amount_raw: "30000000",
            decimals: 6,
            amount_source: "event",
            amount_status: "resolved",
            tx_hash: `0x${"ab".repeat(32)}`,
            tx_from: null,
            block_number: 4638848,
            block_hash: null,
            log_index: 3,
            ts: 1511887921,
            origin: "recorded",
          },
          { id: "x", amount_raw: "1.5" },
          7,
        ],
      },
    },
  },
};
