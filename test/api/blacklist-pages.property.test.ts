import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeKeyset } from "../../api/lib/cursor.ts";
import { HttpError } from "../../api/lib/http-error.ts";
import { fsReader, type ObjectReader, ServingBuild } from "../../api/lib/published.ts";
import { blacklistPagesBytes } from "../../api/queries/blacklist-pages.ts";
import { BlacklistQuery, blacklistPageBytes, queryBlacklist } from "../../api/queries/blacklist.ts";
import { BLACKLIST_PAGES, encodeBlacklistPages } from "../../site-data/blacklist-pages.ts";
import { type BlacklistEvent, type BlacklistLedger, blacklistLedgerArtifact } from "../../site-data/blacklist.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { prng } from "../helpers/prng.ts";

// The serving layout (site-data/blacklist-pages.ts, api/queries/blacklist-pages.ts) against the in-heap
// reference (queryBlacklist + blacklistPageBytes over the parsed JSON ledger): the same bytes, or the
// same 400, for random parameter combinations, cursor walks and cursors carried across sort orders.
// The synthetic ledger is small but dense in ties: few timestamps, so rows tie on (prefix, time) and
// order by id, ids of different lengths, mixed-case addresses.

const AS_OF = 1_757_203_200;
const CHAINS = [
  { id: "ethereum", name: "Ethereum" },
  { id: "tron", name: "Tron" },
  { id: "arbitrum", name: "Arbitrum" },
  { id: "optimism", name: "OP Mainnet" },
  { id: "base", name: "Base" },
];
const COINS = ["USDT", "USDC", "PYUSD", "XAUT", "USD₮0"];
const TYPES = ["blacklist", "unblacklist", "destroy"] as const;

/** `rows` synthetic events (ARBITRARY DATA for this test, seeded) on CHAINS[0..3] (Base has no rows: a registry chain without events). */
function syntheticEvents(rows: number, seed: number): BlacklistEvent[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdefABCDEF"[Math.floor(rnd() * 22)]).join("");
  const times = Array.from({ length: 25 }, (_, k) => 1_500_000_000 + k * 86_400 * 37);
  const addresses = Array.from({ length: 60 }, (_, k) => (k % 4 === 3 ? `T${hex(33)}` : `0x${hex(40)}`));
  const out: BlacklistEvent[] = [];
  const ids = new Set<string>();
  while (out.length < rows) {
    const chain = pick(CHAINS.slice(0, 4));
    const id = `${chain.id}-0x${hex(6)}-${Math.floor(rnd() * 120)}`;
    if (ids.has(id)) continue;
    ids.add(id);
    const raw = rnd() < 0.2 ? null : String(Math.floor(rnd() * 1e12));
    const type = pick(TYPES);
    out.push({
      id,
      stablecoin: pick(COINS),
      stablecoinId: "x-y",
      chainId: chain.id,
      chainName: chain.name,
      eventType: type,
      address: pick(addresses),
      amountNative: raw === null ? null : Number(raw) / 1e6,
      amountRaw: raw,
      decimals: 6,
      amountUsdAtEvent: raw === null ? null : Math.round(Number(raw) / 1e4) / 100,
      amountSource: raw === null ? "unavailable" : "event",
      amountStatus: raw === null ? "provider_failed" : "resolved",
      txHash: `0x${hex(64)}`,
      blockNumber: Math.floor(rnd() * 2e7),
      logIndex: Math.floor(rnd() * 300),
      timestamp: pick(times),
      methodologyVersion: "freeze-v1",
      contractAddress: rnd() < 0.1 ? null : `0x${hex(40)}`,
      configKey: "cfg",
      eventSignature: null,
      eventTopic0: null,
      suppressionReason: null,
      explorerTxUrl: null,
      explorerAddressUrl: rnd() < 0.5 ? null : `https://x/\u00e9"${id}`,
      linkedFreezeEventId: type === "destroy" ? `${chain.id}-0xabc-1` : null,
      frozenDurationSec: type === "destroy" ? 86_400 : null,
      origin: rnd() < 0.5 ? "live" : "recorded",
    });
  }
  // the JSON ledger is newest first, as the artifact publishes it
  return out.sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** A published build in `dir` holding the JSON ledger and its serving layout; returns its manifest. */
function writeBuild(dir: string, ledger: BlacklistLedger, buildId: string): BuildManifest {
  const pages = encodeBlacklistPages(ledger.events, ledger.chains);
  const bodies: [string, Uint8Array][] = [
    [blacklistLedgerArtifact.outputs.main.path, Buffer.from(JSON.stringify(ledger))],
    [BLACKLIST_PAGES.events, pages.events],
    [BLACKLIST_PAGES.index, pages.index],
    [BLACKLIST_PAGES.addresses, pages.addresses],
  ];
  for (const [path, body] of bodies) {
    mkdirSync(join(dir, "builds", buildId, path, ".."), { recursive: true });
    writeFileSync(join(dir, "builds", buildId, path), body);
  }
  return {
    buildId,
    asOf: AS_OF,
    files: bodies.map(([path, body]) => ({
      path,
      sha256: "0".repeat(64),
      bytes: body.byteLength,
      rows: ledger.events.length,
      dataAsOf: AS_OF,
    })),
  } as unknown as BuildManifest;
}

type Raw = Record<string, string>;
type Answer = { status: number; body: string };

let dir: string;
let ledger: BlacklistLedger;
/** Builds over the same files: positioned reads (fsReader) and whole-file slices (a reader without `ranges`). */
let ranged: ServingBuild, sliced: ServingBuild, reference: ServingBuild;

const answer = async (f: () => Promise<Uint8Array>): Promise<Answer> => {
  try {
    return { status: 200, body: Buffer.from(await f()).toString("utf8") };
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, body: err.message };
    throw err;
  }
};
const refAnswer = (raw: Raw) =>
  answer(async () =>
    blacklistPageBytes(reference, await queryBlacklist(reference, ledger, AS_OF, BlacklistQuery.parse(raw))),
  );
const newAnswer = (build: ServingBuild, raw: Raw) =>
  answer(() => blacklistPagesBytes(build, AS_OF, BlacklistQuery.parse(raw)));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ballast-blacklist-pages-"));
  ledger = { events: syntheticEvents(600, 21), chains: CHAINS };
  const manifest = writeBuild(dir, ledger, "20250907T0000Z-test");
  const fs = fsReader(dir);
  const whole: ObjectReader = (key) => fs(key);
  ranged = new ServingBuild(manifest, 0, fs);
  sliced = new ServingBuild(manifest, 0, whole);
  reference = new ServingBuild(manifest, 0, fs);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const addressPart = () =>
  fc.constantFrom(...new Set(syntheticEvents(600, 21).map((e) => e.address))).chain((a) =>
    fc.tuple(fc.nat(a.length - 1), fc.integer({ min: 1, max: 6 }), fc.boolean()).map(([s, l, up]) => {
      const x = a.slice(s, s + l);
      return up ? x.toUpperCase() : x.toLowerCase();
    }),
  );

/** Raw query parameters as a client sends them (strings), without a cursor. */
const rawQuery: fc.Arbitrary<Raw> = fc.record(
  {
    stablecoin: fc.constantFrom(...COINS, "DAI"),
    chain: fc.constantFrom(...CHAINS.map((c) => c.name), "Atlantis"),
    chainId: fc.constantFrom(...CHAINS.map((c) => c.id), "atlantis"),
    eventType: fc.constantFrom(...TYPES),
    q: fc.oneof(addressPart(), fc.constantFrom("", "0x", "zz", "T", "abc")),
    sortBy: fc.constantFrom("date", "stablecoin", "chain", "event"),
    sortDirection: fc.constantFrom("asc", "desc"),
    limit: fc.constantFrom("0", "1", "2", "7", "50", "1000"),
    offset: fc.constantFrom("0", "1", "5", "40", "599", "600", "25000"),
    includeTotal: fc.constantFrom("true", "false"),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<Raw>;

describe("/api/blacklist serving layout = the in-heap reference", () => {
  it("answers every parameter combination with the same bytes (or the same 400)", async () => {
    await fc.assert(
      fc.asyncProperty(rawQuery, async (raw) => {
        const want = await refAnswer(raw);
        expect(await newAnswer(ranged, raw)).toEqual(want);
        expect(await newAnswer(sliced, raw)).toEqual(want);
      }),
      { numRuns: 400, seed: 0x5eed },
    );
  });

  it("walks by cursor page for page like the reference, and a cursor carried to another sort continues after the same row", async () => {
    const walkable = rawQuery.map(({ offset: _o, ...r }) => ({
      ...r,
      limit: r.limit === "1000" || r.limit === "0" ? "37" : (r.limit ?? "37"),
    }));
    await fc.assert(
      fc.asyncProperty(
        walkable,
        fc.constantFrom("date", "stablecoin", "chain", "event"),
        fc.constantFrom("asc", "desc"),
        async (raw, otherSort, otherDir) => {
          let cursor: string | null = null;
          let pages = 0;
          do {
            const q: Raw = cursor ? { ...raw, cursor } : raw;
            const want = await refAnswer(q);
            expect(await newAnswer(ranged, q)).toEqual(want);
            if (want.status !== 200) return;
            cursor = JSON.parse(want.body).nextCursor;
            if (cursor) {
              // the same cursor under another order (and/or direction), without filters
              const moved: Raw = { sortBy: otherSort, sortDirection: otherDir, limit: "5", cursor };
              expect(await newAnswer(ranged, moved)).toEqual(await refAnswer(moved));
            }
          } while (cursor && ++pages < 40);
        },
      ),
      { numRuns: 60, seed: 0xc0de },
    );
  });

  it("treats forged cursors like the reference: keys between rows, unknown rows, wrong sorts, bad text", async () => {
    const e = ledger.events[17];
    const cases: Raw[] = [
      { cursor: encodeKeyset("date:desc", [e.timestamp, e.id]) },
      { cursor: encodeKeyset("date:desc", [e.timestamp, `${e.id}~`]) },
      { cursor: encodeKeyset("date:asc", [e.timestamp + 1, "a"]), sortDirection: "asc" },
      { cursor: encodeKeyset("stablecoin:asc", ["USDB", e.timestamp, ""]), sortBy: "stablecoin", sortDirection: "asc" },
      { cursor: encodeKeyset("stablecoin:desc", ["ZZZ", 0, "x"]), sortBy: "stablecoin" },
      { cursor: encodeKeyset("chain:asc", ["", -1, ""]), sortBy: "chain", sortDirection: "asc" },
      { cursor: encodeKeyset("event:desc", ["destroy", e.timestamp, e.id]), sortBy: "event" },
      { cursor: encodeKeyset("date:desc", [e.timestamp, "no-such-row"]), sortBy: "chain" },
      { cursor: encodeKeyset("date:desc", [e.timestamp, e.id]), sortBy: "stablecoin", sortDirection: "asc" },
      { cursor: encodeKeyset("date:desc", [e.timestamp]) },
      { cursor: "bm90LWEtY3Vyc29y" },
      { cursor: encodeKeyset("date:desc", [e.timestamp, e.id]), offset: "3" },
      { chain: "Ethereum", chainId: "tron" },
      { chain: "Atlantis", chainId: "ethereum" },
      { chain: "Base" },
      { chain: "Atlantis", cursor: encodeKeyset("date:desc", [e.timestamp, e.id]) },
    ];
    for (const raw of cases) expect(await newAnswer(ranged, raw)).toEqual(await refAnswer(raw));
  });

  it("is byte-reproducible and keeps the ledger order's ties by id", () => {
    const a = encodeBlacklistPages(ledger.events, ledger.chains);
    const b = encodeBlacklistPages([...ledger.events].reverse(), ledger.chains);
    expect(Buffer.compare(a.events, b.events)).toBe(0);
    expect(Buffer.compare(a.index, b.index)).toBe(0);
    expect(Buffer.compare(a.addresses, b.addresses)).toBe(0);
    const lines = a.events
      .toString("utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as BlacklistEvent);
    expect(lines.map((l) => l.id)).toEqual([...ledger.events].reverse().map((x) => x.id));
  });
});
