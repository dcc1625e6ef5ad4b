import { type AbiEvent, type Hex, encodeAbiParameters, encodeEventTopics, parseAbiItem, toEventSelector } from "viem";
import { describe, expect, it } from "vitest";
import { OnchainEventRowSchema } from "../../pipelines/onchain/contract.ts";
import {
  BlockHeaderCache,
  type ChainReader,
  decodeLog,
  decodeLogs,
  type RawLog,
} from "../../pipelines/onchain/decode.ts";
import { type TrackedConfig, trackedConfigs } from "../../pipelines/onchain/tracked.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";

// Synthetic logs built from the contracts' Solidity declarations with viem's ABI encoder: what is
// indexed comes from the declaration, so the expected address/amount is what the test encoded.

const registry = loadRegistry();
const TX = `0x${"ab".repeat(32)}` as Hex;
const BLOCK_HASH = `0x${"cd".repeat(32)}` as Hex;
const CONTRACT = "0x00000000000000000000000000000000000c0ffe";
const HOLDER = "0x1234567890abcdef1234567890abcdef12345678";
const OTHER = "0x9999999999999999999999999999999999999999";
const ZERO = "0x0000000000000000000000000000000000000000";
const BIG = 2n ** 200n + 12345n; // far above 2^53

function config(family: string, purpose: "freeze" | "supply" = "freeze"): TrackedConfig {
  return {
    configKey: `test-coin:ethereum:${CONTRACT}:${family}`,
    stablecoinId: "test-coin",
    symbol: "TEST",
    chain: "ethereum",
    evmChainId: 1,
    address: CONTRACT,
    decimals: 6,
    startBlock: null,
    family,
    events: registry.eventFamilies[family],
    purpose,
    contractSource: "primary",
    unsupportedReason: null,
  };
}

/** A log of `decl` (Solidity event declaration) with `args`, encoded by viem (indexed args → topics, the rest → data). */
function logOf(decl: string, args: unknown[], logIndex = 3): RawLog {
  const ev = parseAbiItem(`event ${decl}`) as AbiEvent;
  const topics = encodeEventTopics({
    abi: [ev],
    eventName: ev.name,
    args: Object.fromEntries(ev.inputs.filter((i) => i.indexed).map((i) => [i.name, args[ev.inputs.indexOf(i)]])),
  } as never) as Hex[];
  const nonIndexed = ev.inputs.filter((i) => !i.indexed);
  const data = encodeAbiParameters(
    nonIndexed,
    ev.inputs.map((inp, k) => (inp.indexed ? undefined : args[k])).filter((_, k) => !ev.inputs[k].indexed),
  );
  return {
    address: CONTRACT,
    topics,
    data,
    blockNumber: 100n,
    blockHash: BLOCK_HASH,
    transactionHash: TX,
    logIndex,
    removed: false,
  };
}

const ctx = { ts: 1_700_000_000, txFrom: null };

function one(family: string, decl: string, args: unknown[], purpose: "freeze" | "supply" = "freeze") {
  const res = decodeLog(config(family, purpose), logOf(decl, args), ctx);
  if (res.status !== "rows") throw new Error(`expected rows, got ${JSON.stringify(res)}`);
  expect(res.events).toHaveLength(1);
  return res.events[0];
}

describe("registry event families", () => {
  it("every family event's topic0 is keccak256 of its signature", () => {
    const all = Object.values(registry.eventFamilies).flat();
    expect(all.length).toBeGreaterThan(30);
    for (const e of all) expect(toEventSelector(e.signature)).toBe(e.topic0);
  });
});

describe("decodeLog", () => {
  it("legacy USDT AddedBlackList(address) carries the address non-indexed in data; amount left to a balance read", () => {
    const e = one("tether-legacy-blacklist", "AddedBlackList(address _user)", [HOLDER]);
    expect(e.row).toMatchObject({
      kind: "blacklist",
      address: HOLDER,
      amount_raw: null,
      amount_status: "recoverable_pending",
      event_name: "AddedBlackList",
    });
    expect(e.needsBalanceRead).toBe(true);
    expect(e.row.id).toBe(`ethereum-${TX}-3`);
    expect(OnchainEventRowSchema.safeParse(e.row).success).toBe(true);
  });

  it("legacy USDT DestroyedBlackFunds(address,uint) reads address word 0 and amount word 1, exactly", () => {
    const e = one("tether-legacy-blacklist", "DestroyedBlackFunds(address _blackListedUser, uint _balance)", [
      HOLDER,
      BIG,
    ]);
    expect(e.row).toMatchObject({
      kind: "destroy",
      address: HOLDER,
      amount_raw: BIG.toString(),
      amount_source: "event",
      amount_status: "resolved",
    });
    expect(e.needsBalanceRead).toBe(false);
  });

  it("USDT0 DestroyedBlockedFunds(address indexed, uint256): address from topics[1], amount data word 0", () => {
    const e = one("tether-indexed-blacklist", "DestroyedBlockedFunds(address indexed _blockedUser, uint256 _balance)", [
      HOLDER,
      42n,
    ]);
    expect(e.row).toMatchObject({ kind: "destroy", address: HOLDER, amount_raw: "42" });
  });

  it("USDC Blacklisted/UnBlacklisted(address indexed)", () => {
    expect(one("circle-blacklist", "Blacklisted(address indexed _account)", [HOLDER]).row).toMatchObject({
      kind: "blacklist",
      address: HOLDER,
      amount_raw: null,
    });
    expect(one("circle-blacklist", "UnBlacklisted(address indexed _account)", [HOLDER]).row).toMatchObject({
      kind: "unblacklist",
      address: HOLDER,
    });
  });

  it("Paxos FrozenAddressWiped has no amount → balance read; SupplyIncreased(address indexed, uint256) is a mint", () => {
    const w = one("paxos-freeze", "FrozenAddressWiped(address indexed addr)", [HOLDER]);
    expect(w.row).toMatchObject({ kind: "destroy", address: HOLDER, amount_raw: null });
    expect(w.needsBalanceRead).toBe(true);
    const m = one("paxos-supply", "SupplyIncreased(address indexed to, uint256 value)", [HOLDER, BIG], "supply");
    expect(m.row).toMatchObject({ kind: "mint", address: HOLDER, amount_raw: BIG.toString(), amount_source: "event" });
    expect(m.needsBalanceRead).toBe(false);
  });

  it("WLFI Freeze(address indexed caller, address indexed account) takes the account from topics[2]", () => {
    expect(
      one("wlfi-freeze", "Freeze(address indexed caller, address indexed account)", [OTHER, HOLDER]).row,
    ).toMatchObject({ kind: "blacklist", address: HOLDER });
  });

  it("an amount in a topic (amountTopicIndex)", () => {
    const e = one("mnee-freeze-confiscation", "HoldingsBurnt(address indexed account, uint256 indexed amount)", [
      HOLDER,
      777n,
    ]);
    expect(e.row).toMatchObject({ kind: "destroy", address: HOLDER, amount_raw: "777" });
  });

  it("Securitize Seize: address topics[1], amount data word 0; OmnibusSeize: address data word 0, amount data word 1", () => {
    expect(
      one("securitize-seize", "Seize(address indexed from, address indexed to, uint256 value, string reason)", [
        HOLDER,
        OTHER,
        5n,
        "court order",
      ]).row,
    ).toMatchObject({ kind: "destroy", address: HOLDER, amount_raw: "5" });
    expect(
      one(
        "securitize-seize",
        "OmnibusSeize(address indexed omnibus, address from, uint256 value, string reason, uint8 mode)",
        [OTHER, HOLDER, 9n, "x", 1],
      ).row,
    ).toMatchObject({ kind: "destroy", address: HOLDER, amount_raw: "9" });
  });

  it("address[] in data → one row per address; ids stay unique and valid", () => {
    const addrs = [HOLDER, OTHER, "0x00000000000000000000000000000000000000aa"];
    const res = decodeLog(config("deny-list"), logOf("AddedToDenyList(address[] accounts)", [addrs]), ctx);
    expect(res.status).toBe("rows");
    if (res.status !== "rows") return;
    expect(res.events.map((e) => e.row.address)).toEqual(addrs);
    expect(res.events.map((e) => e.row.id)).toEqual([`ethereum-${TX}-3`, `ethereum-${TX}-3-1`, `ethereum-${TX}-3-2`]);
    for (const e of res.events) {
      expect(OnchainEventRowSchema.safeParse(e.row).success).toBe(true);
      expect(e.row).toMatchObject({ kind: "blacklist", log_index: 3, tx_hash: TX });
    }
  });

  it("ERC-20 Transfer: from zero = mint (to), to zero = burn (from), other transfers ignored", () => {
    const decl = "Transfer(address indexed from, address indexed to, uint256 value)";
    expect(one("erc20-supply", decl, [ZERO, HOLDER, BIG], "supply").row).toMatchObject({
      kind: "mint",
      address: HOLDER,
      amount_raw: BIG.toString(),
    });
    expect(one("erc20-supply", decl, [HOLDER, ZERO, 10n], "supply").row).toMatchObject({
      kind: "burn",
      address: HOLDER,
      amount_raw: "10",
    });
    expect(decodeLog(config("erc20-supply", "supply"), logOf(decl, [HOLDER, OTHER, 1n]), ctx)).toEqual({
      status: "ignored",
      reason: "transfer-not-mint-or-burn",
    });
  });

  it("USDT Issue(uint256) has no address: the transaction sender is credited", () => {
    const res = decodeLog(config("tether-supply", "supply"), logOf("Issue(uint amount)", [1_000_000n]), {
      ts: 5,
      txFrom: OTHER,
    });
    expect(res.status === "rows" && res.events[0].row).toMatchObject({
      kind: "mint",
      address: OTHER,
      tx_from: OTHER,
      amount_raw: "1000000",
    });
  });

  it("unknown topic0 is not a row", () => {
    const res = decodeLog(
      config("circle-blacklist"),
      logOf("Mint(address indexed minter, address indexed to, uint256 amount)", [HOLDER, OTHER, 1n]),
      ctx,
    );
    expect(res).toEqual({ status: "unknown-topic", topic0: toEventSelector("Mint(address,address,uint256)") });
  });

  it("malformed logs are reported, not decoded: short data, dirty address word, missing topic", () => {
    const good = logOf("DestroyedBlackFunds(address _blackListedUser, uint _balance)", [HOLDER, 1n]);
    const short = { ...good, data: good.data.slice(0, 2 + 64) as Hex };
    expect(decodeLog(config("tether-legacy-blacklist"), short, ctx)).toMatchObject({
      status: "malformed",
      reason: "data-word-1-missing",
    });
    const dirty = { ...good, data: `0x${"ff".repeat(12)}${good.data.slice(26)}` as Hex };
    expect(decodeLog(config("tether-legacy-blacklist"), dirty, ctx)).toMatchObject({
      status: "malformed",
      reason: "data-word-0-not-an-address",
    });
    const noTopic = { ...logOf("Freeze(address indexed caller, address indexed account)", [OTHER, HOLDER]) };
    noTopic.topics = noTopic.topics.slice(0, 2);
    expect(decodeLog(config("wlfi-freeze"), noTopic, ctx)).toMatchObject({
      status: "malformed",
      reason: "topic-2-missing",
    });
  });

  it("lowercases mixed-case addresses and hashes", () => {
    const log = logOf("Blacklisted(address indexed _account)", [HOLDER]);
    const upper = {
      ...log,
      transactionHash: TX.toUpperCase().replace("0X", "0x") as Hex,
      blockHash: BLOCK_HASH.toUpperCase().replace("0X", "0x") as Hex,
    };
    const res = decodeLog(config("circle-blacklist"), upper, ctx);
    expect(res.status === "rows" && res.events[0].row).toMatchObject({
      tx_hash: TX,
      block_hash: BLOCK_HASH,
      id: `ethereum-${TX}-3`,
    });
  });
});

describe("decodeLogs", () => {
  const reader = (hash: Hex = BLOCK_HASH): ChainReader & { headerCalls: number } => {
    const r = {
      headerCalls: 0,
      async blockHeader(_chain: string, n: bigint) {
        r.headerCalls += 1;
        return { number: n, hash, timestamp: 1_650_000_000 + Number(n) };
      },
      async transactionFrom() {
        return OTHER;
      },
    };
    return r;
  };

  it("takes ts from the block header, fetching each block once", async () => {
    const rd = reader();
    const logs = [
      logOf("Blacklisted(address indexed _account)", [HOLDER], 1),
      logOf("UnBlacklisted(address indexed _account)", [HOLDER], 2),
    ];
    const out = await decodeLogs(config("circle-blacklist"), logs, new BlockHeaderCache(rd, "ethereum"), rd);
    expect(out.reorg).toBeNull();
    expect(out.events.map((e) => e.row.ts)).toEqual([1_650_000_100, 1_650_000_100]);
    expect(rd.headerCalls).toBe(1);
  });

  it("flags a reorg for a removed log or a block hash that is no longer the chain's", async () => {
    const rd = reader();
    const removed = { ...logOf("Blacklisted(address indexed _account)", [HOLDER]), removed: true };
    expect(
      (await decodeLogs(config("circle-blacklist"), [removed], new BlockHeaderCache(rd, "ethereum"), rd)).reorg,
    ).toMatch(/removed/);
    const other = reader(`0x${"ee".repeat(32)}`);
    const res = await decodeLogs(
      config("circle-blacklist"),
      [logOf("Blacklisted(address indexed _account)", [HOLDER])],
      new BlockHeaderCache(other, "ethereum"),
      other,
    );
    expect(res.reorg).toMatch(/no longer/);
    expect(res.events).toEqual([]);
  });

  it("counts unknown topics and ignored transfers", async () => {
    const rd = reader();
    const logs = [
      logOf("Transfer(address indexed from, address indexed to, uint256 value)", [HOLDER, OTHER, 1n]),
      logOf("Mint(address indexed minter, address indexed to, uint256 amount)", [HOLDER, OTHER, 1n]),
      logOf("Mint(address indexed minter, address indexed to, uint256 amount)", [HOLDER, OTHER, 2n]),
    ];
    const out = await decodeLogs(config("erc20-supply", "supply"), logs, new BlockHeaderCache(rd, "ethereum"), rd);
    expect(out.ignored).toBe(1);
    expect([...out.unknownTopics]).toEqual([[toEventSelector("Mint(address,address,uint256)"), 2]]);
  });
});

describe("trackedConfigs of the committed registry", () => {
  it("every supported EVM config's family is known and non-empty", () => {
    const cfgs = trackedConfigs(registry).filter((c) => c.unsupportedReason === null && c.chain !== "tron");
    expect(cfgs.length).toBeGreaterThan(10);
    for (const c of cfgs) expect(c.events.length).toBeGreaterThan(0);
  });
});
