import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnchainEventRowSchema } from "../../pipelines/onchain/contract.ts";
import { type TrackedConfig, trackedConfigs } from "../../pipelines/onchain/tracked.ts";
import { loadRegistry } from "../../pipelines/registry/registry.ts";
import { UpstreamError } from "../../pipelines/sources/http-client.ts";
import {
  createTronGridClient,
  fetchTronEventPages,
  parseTronEvents,
  type TronEventPage,
  TRONGRID_BASE_URL,
  TRONGRID_SETTLE_MS,
  tronBase58ToHex,
  tronHexToBase58,
} from "../../pipelines/sources/trongrid.ts";
import { must } from "../helpers/must.ts";

// Address pairs (hex ↔ base58) fixed independently of the code under test:
// - USDT contract: the brief / Tronscan.
// - TLCu…: TronGrid's README (`/v1/accounts/TLCuBEirVzB6V4menLZKw1jfBTFMZbuKq7` answers `address: 41704833…`).
// - the others: computed with Python hashlib (double SHA-256, base58 alphabet) outside this repo.
const USDT = { b58: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", hex: "41a614f803b6fd780986a42c78ec9c7f77e6ded13c" };
const USD1 = { b58: "TPFqcBAaaUMCSVRCqPaQ9QnzKhmuoLR6Rc", hex: "4191bed8e784249c91611e61c4585c40e21fd0ace2" };
const VICTIM_A = { b58: "TLCuBEirVzB6V4menLZKw1jfBTFMZbuKq7", hex: "41704833c02883b3261f7baf62f8cb19b4b0c2e64e" };
const VICTIM_B = { b58: "TKHuVq1oKVruCGLvqVexFs6dawKv6fQgFs", hex: "4166426c7ac3d98b29191063833345b6bc540d7278" };
const CALLER = { b58: "TCuXoztYBZ3pyYHj4KtaG1ZJtkBmvDF9J5", hex: "4120366a2b5e52cd7980936953f42035796a8e93ad" };
const ACCOUNT = { b58: "TUYEUXXyXEexT7DUqvtRQFBTmJxaEYZW6K", hex: "41cbb1388f7031f85fabe05f07bcf6a116f146fb89" };

/** TronGrid's usual result form: `0x` + the 20-byte address (41 prefix dropped). */
const x20 = (hex: string) => `0x${hex.slice(2)}`;

const configs = trackedConfigs(loadRegistry());
const usdtTron = must(
  configs.find((c) => c.stablecoinId === "usdt-tether" && c.chain === "tron" && c.purpose === "freeze"),
  "the usdt-tether tron freeze config",
);
const usd1Tron = must(
  configs.find(
    (c) => c.stablecoinId === "usd1-world-liberty-financial" && c.chain === "tron" && c.purpose === "freeze",
  ),
  "the usd1-world-liberty-financial tron freeze config",
);

const TX = (n: number) => n.toString(16).padStart(2, "0").repeat(32);

/** One TronGrid v1 contract event, shaped as `GET /v1/contracts/{address}/events` returns it. */
function tgEvent(o: {
  name: string;
  event?: string;
  result: Record<string, unknown>;
  resultType?: Record<string, string>;
  tx: string;
  index?: number;
  block: number;
  tsMs: number;
  contract?: string;
  unconfirmed?: boolean;
}): Record<string, unknown> {
  const e: Record<string, unknown> = {
    block_number: o.block,
    block_timestamp: o.tsMs,
    caller_contract_address: o.contract ?? USDT.b58,
    contract_address: o.contract ?? USDT.b58,
    event_index: o.index ?? 0,
    event_name: o.name,
    result: o.result,
    result_type: o.resultType ?? {},
    transaction_id: o.tx,
  };
  if (o.event !== undefined) e.event = o.event;
  if (o.unconfirmed) e._unconfirmed = true;
  return e;
}

function envelope(data: unknown[], fingerprint?: string): Record<string, unknown> {
  const meta: Record<string, unknown> = { at: 1_767_225_600_000, page_size: data.length };
  if (fingerprint) {
    meta.fingerprint = fingerprint;
    meta.links = { next: `https://api.trongrid.io/v1/contracts/x/events?fingerprint=${fingerprint}` };
  }
  return { data, success: true, meta };
}

describe("parseTronEvents (tether-legacy-blacklist on Tron)", () => {
  const added = tgEvent({
    name: "AddedBlackList",
    event: "AddedBlackList(address _user)",
    result: { "0": x20(VICTIM_A.hex), _user: x20(VICTIM_A.hex) },
    resultType: { _user: "address" },
    tx: TX(0xa1).toUpperCase(),
    index: 0,
    block: 56_000_000,
    tsMs: 1_700_000_001_000,
  });
  const removed = tgEvent({
    name: "RemovedBlackList",
    event: "RemovedBlackList(address _user)",
    result: { "0": VICTIM_B.hex, _user: VICTIM_B.hex },
    resultType: { _user: "address" },
    tx: TX(0xb2),
    index: 3,
    block: 56_000_010,
    tsMs: 1_700_000_031_000,
  });
  const destroyed = tgEvent({
    name: "DestroyedBlackFunds",
    event: "DestroyedBlackFunds(address _blackListedUser, uint256 _balance)",
    result: {
      "0": VICTIM_A.b58,
      "1": "1234567890123456789012",
      _blackListedUser: VICTIM_A.b58,
      _balance: "1234567890123456789012",
    },
    resultType: { _blackListedUser: "address", _balance: "uint256" },
    tx: TX(0xc3),
    index: 1,
    block: 56_000_020,
    tsMs: 1_700_000_061_999,
  });
  const unconfirmed = tgEvent({
    name: "AddedBlackList",
    event: "AddedBlackList(address _user)",
    result: { "0": x20(VICTIM_B.hex), _user: x20(VICTIM_B.hex) },
    tx: TX(0xd4),
    block: 56_000_030,
    tsMs: 1_700_000_091_000,
    unconfirmed: true,
  });
  const malformed = {
    ...tgEvent({
      name: "AddedBlackList",
      result: { _user: x20(VICTIM_B.hex) },
      tx: TX(0xe5),
      block: 1,
      tsMs: 1_700_000_094_000,
    }),
    transaction_id: "0xnothex",
  };
  const transfer = tgEvent({
    name: "Transfer",
    event: "Transfer(address indexed from, address indexed to, uint256 value)",
    result: { from: x20(VICTIM_A.hex), to: x20(VICTIM_B.hex), value: "5" },
    tx: TX(0xf6),
    block: 56_000_040,
    tsMs: 1_700_000_121_000,
  });

  it("maps blacklist, unblacklist and destroy events to validated rows and counts the rest", () => {
    const out = parseTronEvents(usdtTron, envelope([added, removed, destroyed, unconfirmed, malformed, transfer]));

    expect(out.unknown).toEqual({ Transfer: 1 });
    expect(out.dropped).toEqual({ unconfirmed: 1, "invalid-transaction_id": 1 });
    expect(out.rows).toHaveLength(3);
    for (const r of out.rows) expect(OnchainEventRowSchema.safeParse(r).success).toBe(true);

    expect(out.rows[0]).toEqual({
      id: `tron-${"a1".repeat(32)}-0`,
      chain_id: "tron",
      stablecoin_id: "usdt-tether",
      config_key: `usdt-tether:tron:${USDT.b58}:tether-legacy-blacklist`,
      contract_address: USDT.b58,
      family: "tether-legacy-blacklist",
      event_name: "AddedBlackList",
      event_signature: "AddedBlackList(address)",
      topic0: "0x42e160154868087d6bfdc0ca23d96a1c1cfa32f1b72ba9ba27b69b98a0d819dc",
      kind: "blacklist",
      address: VICTIM_A.b58,
      amount_raw: null,
      decimals: 6,
      amount_source: "unavailable",
      amount_status: "recoverable_pending",
      tx_hash: "a1".repeat(32),
      tx_from: null,
      block_number: 56_000_000,
      block_hash: null,
      log_index: 0,
      ts: 1_700_000_001,
      origin: "live",
    });
    expect(out.rows[1]).toMatchObject({
      id: `tron-${"b2".repeat(32)}-3`,
      event_name: "RemovedBlackList",
      event_signature: "RemovedBlackList(address)",
      kind: "unblacklist",
      address: VICTIM_B.b58,
      amount_raw: null,
      amount_status: "recoverable_pending",
      log_index: 3,
      ts: 1_700_000_031,
    });
    expect(out.rows[2]).toMatchObject({
      id: `tron-${"c3".repeat(32)}-1`,
      event_name: "DestroyedBlackFunds",
      event_signature: "DestroyedBlackFunds(address,uint256)",
      topic0: "0x61e6e66b0d6339b2980aecc6ccc0039736791f0ccde9ed512e789a7fbdd698c6",
      kind: "destroy",
      address: VICTIM_A.b58,
      amount_raw: "1234567890123456789012",
      amount_source: "event",
      amount_status: "resolved",
      ts: 1_700_000_061, // floor(1_700_000_061_999 / 1000)
    });
  });

  it("keeps destroy amounts above 2^53 exact", () => {
    const [row] = parseTronEvents(usdtTron, envelope([destroyed])).rows;
    const raw = must(row.amount_raw, "the destroy's amount_raw");
    expect(BigInt(raw)).toBe(1_234_567_890_123_456_789_012n);
    expect(BigInt(raw) > 2n ** 53n).toBe(true);
    // A float round trip would have changed it: the parser must not pass through Number.
    expect(String(BigInt(Number("1234567890123456789012")))).not.toBe(row.amount_raw);
  });

  it("drops events that do not fit the family, with a reason each", () => {
    const badChecksum = `${VICTIM_A.b58.slice(0, -1)}${VICTIM_A.b58.endsWith("7") ? "8" : "7"}`;
    const events = [
      tgEvent({
        name: "AddedBlackList",
        event: "AddedBlackList(uint256 _user)",
        result: { _user: "1" },
        tx: TX(1),
        block: 1,
        tsMs: 1_700_000_000_000,
      }),
      tgEvent({
        name: "AddedBlackList",
        result: { _user: x20(VICTIM_A.hex) },
        tx: TX(2),
        block: 1,
        tsMs: 1_700_000_000_000,
        contract: USD1.b58,
      }),
      tgEvent({
        name: "AddedBlackList",
        result: { "0": badChecksum, _user: badChecksum },
        tx: TX(3),
        block: 1,
        tsMs: 1_700_000_000_000,
      }),
      tgEvent({
        name: "DestroyedBlackFunds",
        event: "DestroyedBlackFunds(address _blackListedUser, uint256 _balance)",
        result: { _blackListedUser: x20(VICTIM_A.hex), _balance: "1.5" },
        tx: TX(4),
        block: 1,
        tsMs: 1_700_000_000_000,
      }),
      {
        ...tgEvent({
          name: "RemovedBlackList",
          result: { _user: x20(VICTIM_A.hex) },
          tx: TX(5),
          block: 1,
          tsMs: 1_700_000_000_000,
        }),
        block_timestamp: "1700000000000",
      },
      "not an event",
      added,
      { ...added },
    ];
    const out = parseTronEvents(usdtTron, envelope(events));
    expect(out.dropped).toEqual({
      "signature-mismatch": 1,
      "contract-mismatch": 1,
      "address-missing-or-invalid": 1,
      "amount-missing-or-invalid": 1,
      "invalid-block_timestamp": 1,
      "event-not-object": 1,
      "duplicate-id": 1,
    });
    expect(out.rows.map((r) => r.id)).toEqual([`tron-${"a1".repeat(32)}-0`]);
    expect(out.unknown).toEqual({});
  });

  it("rejects a failed envelope and a non-Tron config", () => {
    expect(() => parseTronEvents(usdtTron, { success: false, error: "bad request", statusCode: 400 })).toThrow(
      UpstreamError,
    );
    expect(() => parseTronEvents(usdtTron, { data: [], success: true })).toThrow(/meta/);
    const eth = must(
      configs.find((c) => c.chain === "ethereum" && c.unsupportedReason === null),
      "a supported ethereum config",
    );
    expect(() => parseTronEvents(eth, envelope([]))).toThrow(/not tron/);
  });
});

describe("parseTronEvents (wlfi-freeze on Tron, tronResultKey account)", () => {
  it("takes the affected address from result.account, not the first address (caller)", () => {
    const freeze = tgEvent({
      name: "Freeze",
      event: "Freeze(address indexed caller, address indexed account)",
      contract: USD1.b58,
      result: { "0": x20(CALLER.hex), "1": x20(ACCOUNT.hex), caller: x20(CALLER.hex), account: x20(ACCOUNT.hex) },
      resultType: { caller: "address", account: "address" },
      tx: TX(0x77),
      index: 2,
      block: 70_000_000,
      tsMs: 1_750_000_002_000,
    });
    // Positional-only result: the `event` text names position 1 `account`.
    const unfreeze = tgEvent({
      name: "Unfreeze",
      event: "Unfreeze(address indexed caller, address indexed account)",
      contract: USD1.b58,
      result: { "0": x20(CALLER.hex), "1": `0x${ACCOUNT.hex}` },
      tx: TX(0x78),
      index: 0,
      block: 70_000_100,
      tsMs: 1_750_000_302_000,
    });
    const out = parseTronEvents(usd1Tron, envelope([freeze, unfreeze]));
    expect(out.dropped).toEqual({});
    expect(out.rows).toHaveLength(2);
    expect(out.rows[0]).toMatchObject({
      id: `tron-${"77".repeat(32)}-2`,
      stablecoin_id: "usd1-world-liberty-financial",
      contract_address: USD1.b58,
      family: "wlfi-freeze",
      event_signature: "Freeze(address,address)",
      kind: "blacklist",
      address: ACCOUNT.b58,
      decimals: 18,
      amount_raw: null,
      amount_source: "unavailable",
      amount_status: "recoverable_pending",
      ts: 1_750_000_002,
    });
    expect(out.rows[1]).toMatchObject({
      kind: "unblacklist",
      address: ACCOUNT.b58,
      event_signature: "Unfreeze(address,address)",
    });
  });
});

describe("TRON base58check", () => {
  it("round-trips the USDT contract and other known pairs", () => {
    expect(tronHexToBase58(USDT.hex)).toBe(USDT.b58);
    expect(tronBase58ToHex(USDT.b58)).toBe(USDT.hex);
    expect(tronHexToBase58(`0x${USDT.hex.toUpperCase()}`)).toBe(USDT.b58);
    expect(tronHexToBase58(x20(USDT.hex))).toBe(USDT.b58); // TronGrid's 20-byte form
    for (const p of [USD1, VICTIM_A, VICTIM_B, CALLER, ACCOUNT]) {
      expect(tronHexToBase58(p.hex)).toBe(p.b58);
      expect(tronBase58ToHex(p.b58)).toBe(p.hex);
    }
  });

  it("throws on a bad checksum, a wrong prefix and malformed hex", () => {
    const bad = `${USDT.b58.slice(0, -1)}${USDT.b58.endsWith("t") ? "u" : "t"}`;
    expect(() => tronBase58ToHex(bad)).toThrow(/checksum/);
    expect(() => tronBase58ToHex("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6O")).toThrow(/base58/); // O is not base58
    // A valid base58check payload with a Bitcoin prefix (0x00), not 0x41.
    expect(() => tronBase58ToHex("1BoatSLRHtKNngkdXEeobR76b53LETtpyT")).toThrow(/0x41/);
    expect(() => tronHexToBase58("42a614f803b6fd780986a42c78ec9c7f77e6ded13c")).toThrow(/hex address/);
    expect(() => tronHexToBase58("0x1234")).toThrow(/hex address/);
  });
});

describe("fetchTronEventPages against a local TronGrid", () => {
  let server: Server;
  let base: string;
  const requests: { path: string; params: URLSearchParams; headers: IncomingHttpHeaders }[] = [];

  const A1 = tgEvent({
    name: "AddedBlackList",
    event: "AddedBlackList(address _user)",
    result: { _user: x20(VICTIM_A.hex) },
    tx: TX(0x11),
    block: 100,
    tsMs: 1_600_000_000_000,
  });
  const A2 = tgEvent({
    name: "AddedBlackList",
    event: "AddedBlackList(address _user)",
    result: { _user: x20(VICTIM_B.hex) },
    tx: TX(0x12),
    block: 200,
    tsMs: 1_600_000_300_000,
  });
  const A3 = tgEvent({
    name: "AddedBlackList",
    event: "AddedBlackList(address _user)",
    result: { _user: x20(CALLER.hex) },
    tx: TX(0x13),
    block: 300,
    tsMs: 1_600_000_600_000,
  });
  const R1 = tgEvent({
    name: "RemovedBlackList",
    event: "RemovedBlackList(address _user)",
    result: { _user: x20(VICTIM_A.hex) },
    tx: TX(0x21),
    block: 150,
    tsMs: 1_600_000_150_000,
  });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      requests.push({ path: url.pathname, params: url.searchParams, headers: req.headers });
      const name = url.searchParams.get("event_name");
      const fp = url.searchParams.get("fingerprint");
      let body: unknown;
      if (url.pathname === `/v1/contracts/${USD1.b58}/events`)
        body = envelope([], "loop"); // a paging loop
      else if (url.pathname !== `/v1/contracts/${USDT.b58}/events`) body = null;
      else if (name === "AddedBlackList" && fp === null) body = envelope([A1, A2], "fp-added-2");
      else if (name === "AddedBlackList" && fp === "fp-added-2") body = envelope([A3]);
      else if (name === "RemovedBlackList" && fp === null) body = envelope([R1]);
      else if (name === "DestroyedBlackFunds" && fp === null) body = envelope([]);
      if (body === null || body === undefined) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ success: false, error: "unexpected request" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => server.close());

  it("pages each event stream by fingerprint with the documented parameters and a monotone cursor", async () => {
    requests.length = 0;
    const min = 1_599_999_999_000;
    const now = 1_700_000_000_000;
    const client = createTronGridClient({ baseUrl: base, apiKey: "test-key", retries: 0 });
    const pages: TronEventPage[] = [];
    for await (const p of fetchTronEventPages(client, usdtTron, {
      minBlockTimestampMs: min,
      pageSize: 2,
      minRequestIntervalMs: 0,
      now: () => now,
    }))
      pages.push(p);

    const maxMs = now - TRONGRID_SETTLE_MS;
    expect(requests).toHaveLength(4);
    expect(requests.map((r) => [r.params.get("event_name"), r.params.get("fingerprint")])).toEqual([
      ["AddedBlackList", null],
      ["RemovedBlackList", null],
      ["DestroyedBlackFunds", null],
      ["AddedBlackList", "fp-added-2"],
    ]);
    for (const r of requests) {
      expect(r.path).toBe(`/v1/contracts/${USDT.b58}/events`);
      expect(r.params.get("only_confirmed")).toBe("true");
      expect(r.params.get("order_by")).toBe("block_timestamp,asc");
      expect(r.params.get("min_block_timestamp")).toBe(String(min));
      expect(r.params.get("max_block_timestamp")).toBe(String(maxMs));
      expect(r.params.get("limit")).toBe("2");
      expect(r.headers["tron-pro-api-key"]).toBe("test-key");
    }

    expect(pages.map((p) => [p.eventName, p.rows.length, p.lastBlockTimestampMs, p.fingerprint, p.cursorMs])).toEqual([
      ["AddedBlackList", 2, 1_600_000_300_000, "fp-added-2", min], // Removed/Destroyed not read yet
      ["RemovedBlackList", 1, 1_600_000_150_000, null, min], // Destroyed not read yet
      ["DestroyedBlackFunds", 0, null, null, 1_600_000_300_000], // Added read up to its page's last event
      ["AddedBlackList", 1, 1_600_000_600_000, null, maxMs], // every stream read through the settled window
    ]);
    expect(pages.flatMap((p) => p.rows.map((r) => r.address))).toEqual([
      VICTIM_A.b58,
      VICTIM_B.b58,
      VICTIM_A.b58,
      CALLER.b58,
    ]);
    expect(pages.flatMap((p) => p.rows.map((r) => r.kind))).toEqual([
      "blacklist",
      "blacklist",
      "unblacklist",
      "blacklist",
    ]);
  });

  it("sends an explicit window end, and stops on a repeated fingerprint", async () => {
    requests.length = 0;
    const client = createTronGridClient({ baseUrl: base, retries: 0 });
    const loop = { ...usd1Tron };
    const seen: TronEventPage[] = [];
    await expect(
      (async () => {
        for await (const p of fetchTronEventPages(client, loop, {
          minBlockTimestampMs: 5_000,
          maxBlockTimestampMs: 9_000,
          minRequestIntervalMs: 0,
        }))
          seen.push(p);
      })(),
    ).rejects.toThrow(/same fingerprint/);
    expect(seen.map((p) => p.fingerprint)).toEqual(["loop"]);
    expect(requests[0].params.get("max_block_timestamp")).toBe("9000");
    expect(requests[0].params.get("limit")).toBe("200");
    expect(requests[0].headers["tron-pro-api-key"]).toBeUndefined();
    expect(requests[1].params.get("fingerprint")).toBe("loop");
  });

  it("rejects bad options before calling upstream", async () => {
    requests.length = 0;
    const client = createTronGridClient({ baseUrl: base, retries: 0 });
    const run = (
      c: Parameters<typeof fetchTronEventPages>[0],
      cfg: TrackedConfig,
      o: Parameters<typeof fetchTronEventPages>[2],
    ) =>
      (async () => {
        for await (const _ of fetchTronEventPages(c, cfg, o)) {
          /* drain */
        }
      })();
    await expect(run(client, usdtTron, { minBlockTimestampMs: 0, pageSize: 201 })).rejects.toThrow(/pageSize/);
    await expect(run(client, usdtTron, { minBlockTimestampMs: 0, apiKey: "k" })).rejects.toThrow(/apiKey/);
    expect(requests).toHaveLength(0);
    expect(TRONGRID_BASE_URL).toBe("https://api.trongrid.io");
  });
});
