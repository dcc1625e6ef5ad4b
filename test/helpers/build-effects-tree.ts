import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { sha256 } from "../../build/captures.ts";
import { REPO_ROOT } from "../../build/config.ts";
import { memoryEffects } from "../../build/memory-effects.ts";
import { runBuild } from "../../build/run-build.ts";
import type { Coin, Registry } from "../../pipelines/registry/schema.ts";
import type { Capture } from "../../pipelines/sources/types.ts";
import { must } from "./must.ts";
import { registryCoin } from "./registry-coin.ts";

// The small build of test/unit/build-effects.test.ts (three coins, two chains, one list capture and one
// ECB rate, through the in-memory effects of build/memory-effects.ts) and its comparable form. Its whole
// output tree is compared with the committed expected tree under test/fixtures/build-effects/expected/:
//   tree.json       every key the sink holds after the build, with how it is compared;
//   files/<key>     the normalised content of each JSON file (compared parsed) and each CSV/NDJSON file (compared as text).
// Regenerate after an intended output change (e.g. a new artifact) with one command, then read the diff:
//   npx tsx scripts/write-build-effects.ts

/** As-of of the fixture build: 2025-09-07T00:00Z (Unix s). */
export const AS_OF = Date.parse("2025-09-07T00:00:00Z") / 1000;
/** The injected wall clock: 2025-09-07T00:05:00.123Z (run ids and run records are stamped with it). */
export const NOW_MS = Date.parse("2025-09-07T00:05:00.123Z");
/** The ECB EUR→USD rate of the fixture (USD per EUR). */
export const EUR_USD = 1.1;
/** The committed expected tree (tree.json + files/). */
export const EXPECTED = join(REPO_ROOT, "test/fixtures/build-effects/expected");

const coin = (id: string, llamaId: string, geckoId: string, pegType: string, pegCurrency: string): Coin =>
  registryCoin(id, llamaId, pegType, pegCurrency, { geckoId });
/** Three coins (two USD, one EUR) on two chains. */
export const REGISTRY: Registry = {
  eventFamilies: {},
  bridges: [],
  chains: [
    { id: "ethereum", name: "Ethereum" },
    { id: "tron", name: "Tron" },
  ],
  coins: [
    coin("aaa-one", "1", "aaa-coin", "peggedUSD", "USD"),
    coin("bbb-two", "2", "bbb-coin", "peggedUSD", "USD"),
    coin("eee-euro", "3", "eee-coin", "peggedEUR", "EUR"),
  ],
};
/** One list entry: `chains` = DefiLlama chain label → circulating now (native peg units, as pre-2025-12-01 lists carry). */
const asset = (
  id: string,
  symbol: string,
  peg: string,
  price: number,
  now: number,
  prevDay: number,
  chains: Record<string, number>,
) => ({
  id,
  name: symbol,
  symbol,
  gecko_id: `${symbol.toLowerCase()}-coin`,
  pegType: peg,
  pegMechanism: "fiat-backed",
  price,
  circulating: { [peg]: now },
  circulatingPrevDay: { [peg]: prevDay },
  circulatingPrevWeek: { [peg]: prevDay },
  circulatingPrevMonth: { [peg]: prevDay },
  chainCirculating: Object.fromEntries(
    Object.entries(chains).map(([label, n]) => [label, { current: { [peg]: n }, circulatingPrevDay: { [peg]: n } }]),
  ),
});
const cap = (endpoint: string, path: string, payload: unknown): Capture => ({
  endpoint,
  params: {},
  observedAt: AS_OF,
  origin: "recorded",
  path,
  sha256: sha256(JSON.stringify(payload)),
  payload,
});
/** One DefiLlama list capture and one ECB rate, both observed at AS_OF. */
export const CAPTURES: Capture[] = [
  cap("defillama.stablecoins", "fixture/stablecoins.json", {
    peggedAssets: [
      asset("1", "AAA", "peggedUSD", 1, 1_000_000, 900_000, { Ethereum: 600_000, Tron: 400_000 }),
      asset("2", "BBB", "peggedUSD", 0.97, 500_000, 500_000, { Ethereum: 500_000 }),
      asset("3", "EEE", "peggedEUR", 1.1, 200_000, 200_000, { Ethereum: 200_000 }),
    ],
  }),
  // ECB rate of Friday 2025-09-05, the latest published by the Sunday as-of
  cap("frankfurter.rates", "fixture/fx.json", { base: "EUR", rates: { "2025-09-05": { USD: EUR_USD } } }),
];

/** How tree.json says a key is compared. */
export type Entry =
  | { kind: "json" } // parsed content equals files/<key> (after normalise)
  | { kind: "text" } // bytes equal files/<key> (after the build id is replaced)
  | { kind: "sha256"; sha256: string; bytes: number } // binary or copied files (PNG, Parquet, methodology changelogs)
  | { kind: "sibling"; of: string } // `.br`/`.gz`: decompresses to the bytes of `of`
  | { kind: "volatile"; why: string }; // key present, bytes intrinsically different per run

/** Stands for the build id in expected keys and contents, so a change to one artifact changes one expected file, not every path. */
export const BUILD_ID = "BUILD-ID";
/** Placeholder for the sha256/bytes of `ballast.duckdb` wherever a manifest lists it (manifest.json, runs/*.json). */
const VOLATILE = "<volatile: ballast.duckdb bytes>";

/**
 * The normalised form of a parsed JSON file: the build id replaced by BUILD_ID in every string (it is
 * checked apart: stamp + content hash), and the sha256 and byte count of the `ballast.duckdb` entry of
 * a manifest (`files[]` where `artifact` is `duckdb`) replaced by VOLATILE, because DuckDB's file bytes
 * differ per run; likewise a snapshot index row's `databaseSha256` and its chain hashes (the day-closing
 * snapshot's DuckDB file). Nothing else is volatile: run ids and run times come from the injected clock.
 */
export function normalise(value: unknown, buildId: string): unknown {
  if (typeof value === "string") return value.replaceAll(buildId, BUILD_ID);
  if (Array.isArray(value)) return value.map((v) => normalise(v, buildId));
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    const n = Object.fromEntries(Object.entries(o).map(([k, v]) => [k, normalise(v, buildId)]));
    if (o.artifact === "duckdb" && "sha256" in o) return { ...n, sha256: VOLATILE, bytes: VOLATILE };
    // a snapshot index row records the day's DuckDB file, so its sha256 and the chain hashes over it vary per run
    if ("databaseSha256" in o && "chainHash" in o)
      return { ...n, databaseSha256: VOLATILE, previousChainHash: VOLATILE, chainHash: VOLATILE };
    return n;
  }
  return value;
}

/**
 * The comparable form of a sink's tree: key (build id replaced) → entry, and key → normalised content
 * for JSON/text entries. A `.br`/`.gz` sibling must decompress to its file's bytes; a run record's
 * `manifest` must equal the build's manifest.json and is then written as a reference to it; `check`
 * is told whether each of these holds (default: throw an Error naming it when not).
 */
export function describeTree(
  tree: Map<string, Uint8Array>,
  buildId: string,
  check: (holds: boolean, what: string) => void = mustHold,
): { entries: Record<string, Entry>; contents: Map<string, unknown> } {
  const entries: Record<string, Entry> = {};
  const contents = new Map<string, unknown>();
  const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");
  const manifestKey = `builds/${buildId}/manifest.json`;
  for (const [key, bytes] of tree) {
    const k = key.replaceAll(buildId, BUILD_ID);
    const sibling = /^(.*)\.(br|gz)$/.exec(key);
    if (sibling && tree.has(sibling[1])) {
      const plain = sibling[2] === "br" ? brotliDecompressSync(bytes) : gunzipSync(bytes);
      check(
        Buffer.compare(plain, must(tree.get(sibling[1]), sibling[1])) === 0,
        `${key} decompresses to ${sibling[1]}`,
      );
      entries[k] = { kind: "sibling", of: sibling[1].replaceAll(buildId, BUILD_ID) };
    } else if (key.endsWith("/ballast.duckdb")) {
      entries[k] = {
        kind: "volatile",
        why: "DuckDB file format: bytes differ per run (excluded from the content hash)",
      };
    } else if (key.endsWith(".json")) {
      entries[k] = { kind: "json" };
      let parsed = JSON.parse(text(bytes)) as Record<string, unknown>;
      if (key.startsWith("runs/")) {
        check(
          isDeepStrictEqual(parsed.manifest, JSON.parse(text(must(tree.get(manifestKey), manifestKey)))),
          `${key}: the run record holds the build's manifest`,
        );
        parsed = { ...parsed, manifest: `<equal to ${manifestKey.replaceAll(buildId, BUILD_ID)}>` };
      }
      contents.set(k, normalise(parsed, buildId));
    } else if (key.endsWith(".csv") || key.endsWith(".ndjson")) {
      entries[k] = { kind: "text" };
      contents.set(k, text(bytes).replaceAll(buildId, BUILD_ID));
    } else {
      entries[k] = { kind: "sha256", sha256: sha256(bytes), bytes: bytes.byteLength };
    }
  }
  return { entries, contents };
}

/** Replaces the committed expected tree under EXPECTED with `described`. */
export function writeExpected(described: ReturnType<typeof describeTree>): void {
  rmSync(EXPECTED, { recursive: true, force: true });
  mkdirSync(join(EXPECTED, "files"), { recursive: true });
  // one key per line, so a diff of the tree reads as a diff of keys
  const lines = Object.entries(described.entries).map(([k, e]) => `  ${JSON.stringify(k)}: ${JSON.stringify(e)}`);
  writeFileSync(join(EXPECTED, "tree.json"), `{\n${lines.join(",\n")}\n}\n`);
  for (const [key, content] of described.contents) {
    const path = join(EXPECTED, "files", key);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
}

/** Throws an Error naming `what` when it does not hold (describeTree's default check). */
function mustHold(holds: boolean, what: string): void {
  if (!holds) throw new Error(`build-effects tree: ${what} does not hold`);
}

/**
 * Runs the fixture build (REGISTRY, CAPTURES, AS_OF, clock NOW_MS) through fresh in-memory effects and
 * rewrites the expected tree from its output; returns the build id and the number of keys written.
 * The caller then reads the diff of test/fixtures/build-effects/expected/.
 */
export async function regenerateExpected(): Promise<{ buildId: string; keys: number }> {
  const fx = memoryEffects({ captures: CAPTURES, nowMs: NOW_MS });
  try {
    const r = await runBuild({ asOf: AS_OF, registry: REGISTRY }, fx);
    const described = describeTree(fx.sink.tree(), r.manifest.buildId);
    writeExpected(described);
    return { buildId: r.manifest.buildId, keys: Object.keys(described.entries).length };
  } finally {
    fx.dispose();
  }
}
