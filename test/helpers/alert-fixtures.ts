import { createHash } from "node:crypto";
import type { BlacklistEvent } from "../../site-data/blacklist.ts";
import type { DepegEvent } from "../../site-data/depeg-events.ts";
import { type BuildManifest, BuildManifestSchema, MANIFEST_SCHEMA_VERSION } from "../../site-data/manifest.ts";
import type { ObjectReader } from "../../api/lib/published.ts";
import { ServingBuild } from "../../api/lib/published.ts";
import type { SafetyGradesPayload } from "../../api/lib/telegram/alerts.ts";

/**
 * Small hand-made alert inputs for tests: depeg incidents, freeze events, safety grades, and an
 * in-memory published store holding builds made of them (`builds/<id>/manifest.json` + files).
 */

/** 2025-09-07 00:00 UTC, the as-of of the first test build. */
export const T0 = 1_757_203_200;

/** A depeg incident (spec 2.6) of `stablecoinId`, open unless `endedAt` is given. */
export function depegEvent(
  over: Partial<DepegEvent> & { id: number; stablecoinId: string; symbol: string },
): DepegEvent {
  return {
    pegType: "peggedUSD",
    direction: "below",
    peakDeviationBps: -369,
    startedAt: T0 - 3600,
    endedAt: null,
    startPrice: 0.97,
    peakPrice: 0.963125,
    recoveryPrice: null,
    pegReference: 1,
    source: "live",
    confirmationSources: null,
    pendingReason: null,
    closeReason: null,
    constituentEventCount: 1,
    provenance: null,
    ...over,
  };
}

/** A freeze (`blacklist`) event (spec 2.5) of `stablecoinId` with `amountUsdAtEvent` (null: unknown). */
export function freezeEvent(
  over: Partial<BlacklistEvent> & {
    id: string;
    stablecoinId: string;
    stablecoin: string;
    amountUsdAtEvent: number | null;
  },
): BlacklistEvent {
  return {
    chainId: "ethereum",
    chainName: "Ethereum",
    eventType: "blacklist",
    address: "0x1234567890abcdef1234567890abcdef12345678",
    amountNative: over.amountUsdAtEvent,
    amountRaw: over.amountUsdAtEvent === null ? null : String(Math.round(over.amountUsdAtEvent * 1e6)),
    decimals: 6,
    amountSource: over.amountUsdAtEvent === null ? "unavailable" : "event",
    amountStatus: over.amountUsdAtEvent === null ? "provider_failed" : "resolved",
    txHash: `0x${"ab".repeat(32)}`,
    blockNumber: 23_000_000,
    logIndex: 1,
    timestamp: T0 - 7200,
    methodologyVersion: "ballast-freeze-v2",
    contractAddress: null,
    configKey: null,
    eventSignature: null,
    eventTopic0: null,
    suppressionReason: null,
    explorerTxUrl: `https://etherscan.io/tx/0x${"ab".repeat(32)}`,
    explorerAddressUrl: null,
    linkedFreezeEventId: null,
    frozenDurationSec: null,
    origin: "live",
    ...over,
  };
}

/** Safety grades payload with `grades` (coin id → [symbol, grade, score]) as of `asOf`. */
export function gradesPayload(
  asOf: number,
  grades: Record<string, [string, SafetyGradesPayload["grades"][number]["grade"], number | null]>,
  over: { version?: string; isCurrent?: boolean; held?: boolean } = {},
): SafetyGradesPayload {
  const version = over.version ?? "ballast-safety-score-v1";
  return {
    grades: Object.entries(grades).map(([id, [symbol, grade, score]]) => ({
      id,
      symbol,
      name: symbol,
      grade,
      score,
      coverageClass: grade === "NR" ? "unrated" : "full",
      missingInputs: [],
      methodologyVersion: version,
      publicationStatus: over.held ? "held" : "published",
    })),
    methodology: {
      version,
      versionLabel: version,
      currentVersion: over.isCurrent === false ? "ballast-safety-score-v2" : version,
      currentVersionLabel: version,
      changelogPath: "/methodology/safety-score.md",
      asOf,
      isCurrent: over.isCurrent !== false,
    },
    publication: over.held ? { status: "held", reason: "test", asOf } : { status: "published", reason: null, asOf },
    updatedAt: asOf,
  };
}

/** Files of one hand-made build: each value is JSON-serialised (a string is stored as is: corrupt files). */
export interface BuildFiles {
  depeg?: DepegEvent[];
  freezes?: BlacklistEvent[];
  grades?: SafetyGradesPayload | string;
}

/** An in-memory published store: `publish` adds a build, `reader` serves `builds/<id>/…`. */
export class MemoryPublished {
  readonly objects = new Map<string, Uint8Array>();
  readonly reader: ObjectReader = async (key) => this.objects.get(key) ?? null;

  /** Stores a build with `files` and returns it as the API would serve it (first seen at `firstSeenMs`). */
  publish(buildId: string, asOf: number, files: BuildFiles, firstSeenMs = asOf * 1000): ServingBuild {
    const contents: [string, unknown][] = [];
    if (files.depeg)
      contents.push([
        "site-data/depeg-events.json",
        { events: files.depeg, pending: [], stablecoinIds: [...new Set(files.depeg.map((e) => e.stablecoinId))] },
      ]);
    if (files.freezes)
      contents.push([
        "site-data/blacklist-events.json",
        { events: files.freezes, chains: [{ id: "ethereum", name: "Ethereum" }] },
      ]);
    if (files.grades !== undefined) contents.push(["site-data/safety-grades.json", files.grades]);
    const manifestFiles = contents.map(([path, value]) => {
      const bytes = Buffer.from(typeof value === "string" ? value : JSON.stringify(value));
      this.objects.set(`builds/${buildId}/${path}`, bytes);
      return {
        path,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        bytes: bytes.length,
        rows: null,
        dataAsOf: asOf,
        schemaVersion: "1.0.0",
        artifact: path,
      };
    });
    const manifest: BuildManifest = BuildManifestSchema.parse({
      schemaVersion: MANIFEST_SCHEMA_VERSION,
      buildId,
      asOf,
      generatedAt: asOf,
      clock: "wall",
      contentHash: "0".repeat(64),
      files: manifestFiles,
      sources: [],
      readerDropped: {},
      circuits: {},
      models: [],
      qualityRejections: {},
    });
    this.objects.set(`builds/${buildId}/manifest.json`, Buffer.from(JSON.stringify(manifest)));
    return new ServingBuild(manifest, firstSeenMs, this.reader);
  }
}
