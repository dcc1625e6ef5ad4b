import { METHODOLOGY_CHANGELOGS } from "../pipelines/analytics/changelogs.ts";
import type { Registry } from "../pipelines/registry/schema.ts";
import { depegLedgerArtifact, DepegLedgerSchema } from "../site-data/depeg-events.ts";
import { dexLiquidityArtifact, DexLiquiditySchema } from "../site-data/dex-liquidity.ts";
import { reportCardsArtifact, ReportCardsPayloadSchema } from "../site-data/report-cards.ts";
import {
  SNAPSHOT_INDEX_KEY, SNAPSHOT_VERSION, type Snapshot, SnapshotIndexSchema, SnapshotSchema, snapshotKey, type SnapshotStablecoin,
} from "../site-data/snapshot.ts";
import { StabilityIndexFileSchema, stabilityIndexArtifact } from "../site-data/stability-index.ts";
import { stablecoinsArtifact, StablecoinsPayloadSchema } from "../site-data/stablecoins.ts";
import { stressSignalsArtifact, StressSignalsFileSchema } from "../site-data/stress-signals.ts";
import { sha256 } from "./captures.ts";
import { log } from "./log.ts";
import type { Sink } from "./sinks/sink.ts";
import { emitBuild, emittedPayload, inputsDigest, toJson } from "./stages/emit.ts";
import { siteDataEmitterOf } from "./stages/emitters.ts";
import { loadAndModel } from "./stages/model.ts";

/** The site-data artifacts a snapshot carries (emitted alone: a snapshot day does not publish a whole build). */
const SNAPSHOT_ARTIFACTS = [stablecoinsArtifact, reportCardsArtifact, stabilityIndexArtifact, stressSignalsArtifact, dexLiquidityArtifact, depegLedgerArtifact];

/** As-of (Unix s) of the snapshot of UTC day `day` (`YYYY-MM-DD`): the day's last second, 23:59:59Z. */
export function snapshotAsOf(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000 + 86399;
}

/** Every UTC day from `from` to `to` inclusive (`YYYY-MM-DD`); throws when `to` is before `from` or either is not a date. */
export function daysBetween(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`), end = Date.parse(`${to}T00:00:00Z`);
  if (!Number.isFinite(start) || !Number.isFinite(end)) throw new Error(`not a YYYY-MM-DD date: ${Number.isFinite(start) ? to : from}`);
  if (end < start) throw new Error(`--to ${to} is before --from ${from}`);
  const out: string[] = [];
  for (let t = start; t <= end; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** Inputs of one snapshot build: the recorded captures (and live ones in the sink), an optional registry. */
export interface SnapshotOptions {
  captureDir: string;
  sink: Sink;
  registry?: Registry;
}

/**
 * Builds the snapshot of UTC day `day` in memory: load → model as of the day's last second (no
 * warehouse history: a snapshot depends only on the recorded inputs, so CI can rebuild it), emits the
 * snapshot's artifacts and composes the envelope (SnapshotSchema). Returns the envelope and its bytes.
 * Throws what the build throws (a missing capture directory, a failed assert).
 */
export async function composeSnapshot(day: string, opts: SnapshotOptions): Promise<{ snapshot: Snapshot; bytes: string }> {
  const asOf = snapshotAsOf(day);
  const modelled = await loadAndModel({ asOf, captureDir: opts.captureDir, sink: opts.sink, registry: opts.registry, warehousePath: null });
  try {
    const emitted = await emitBuild({ db: modelled.db, asOf, asOfDay: modelled.asOfDay, sourceObservedAt: modelled.sourceObservedAt, inputsSha256: inputsDigest(modelled.captures) }, [siteDataEmitterOf(SNAPSHOT_ARTIFACTS)]);
    const files = new Map(emitted.files.map((f) => [f.file.path, f.body]));
    const list = emittedPayload(files, stablecoinsArtifact, StablecoinsPayloadSchema);
    if (!list) throw new Error(`snapshot ${day}: the stablecoin list was not emitted or failed its schema`);
    const cards = emittedPayload(files, reportCardsArtifact, ReportCardsPayloadSchema);
    const psi = emittedPayload(files, stabilityIndexArtifact, StabilityIndexFileSchema);
    const dews = emittedPayload(files, stressSignalsArtifact, StressSignalsFileSchema);
    const liquidity = emittedPayload(files, dexLiquidityArtifact, DexLiquiditySchema);
    const depeg = emittedPayload(files, depegLedgerArtifact, DepegLedgerSchema);
    if (!depeg) throw new Error(`snapshot ${day}: the depeg ledger was not emitted or failed its schema`);
    const unavailable: Record<string, string> = {};
    if (!cards) unavailable.reportCards = "no report cards published as of this day";
    if (!psi?.current) unavailable.psi = "no stability index reading as of this day";
    if (!dews) unavailable.dews = "no stress signals published as of this day";
    if (!liquidity) unavailable.liquidity = "no DEX pool capture observed by this day";
    const dayStart = asOf - 86399;
    // The captures that contributed rows (a history file recorded after the day contributes none).
    const used = modelled.sources.flatMap((s) => s.captures.filter((c) => c.rows > 0).map((c) => ({ endpoint: s.endpoint, path: c.path, sha256: c.sha256, observedAt: c.observedAt })));
    const inputs = [...new Map(used.map((c) => [c.path, c])).values()].sort((a, b) => a.path.localeCompare(b.path));
    const snapshot = SnapshotSchema.parse({
      version: SNAPSHOT_VERSION,
      snapshotDate: day,
      asOf,
      generatedAt: asOf,
      buildId: emitted.buildId,
      methodologyVersions: Object.fromEntries(METHODOLOGY_CHANGELOGS.map((c) => [c.versionId.replace(/-v\d+$/, "").replace(/^ballast-/, ""), c.versionId])),
      inputs,
      stablecoins: list.peggedAssets.map((a): SnapshotStablecoin => ({
        id: a.id, name: a.name, symbol: a.symbol, pegType: a.pegType, pegMechanism: a.pegMechanism, price: a.price, priceConfidence: a.priceConfidence,
        priceSource: a.priceSource, priceUnavailableReason: a.priceUnavailableReason ?? null, circulatingUsd: a.circulating[a.pegType] ?? null,
        circulating: a.circulating, chains: a.chains, supplySource: a.supplySource ?? null,
      })),
      fxFallbackRates: list.fxFallbackRates ?? {},
      reportCards: cards?.cards ?? [],
      psi: psi?.current ?? null,
      dews: dews?.coins ?? [],
      liquidity: liquidity?.coins ?? [],
      depegIncidents: depeg.events.filter((e) => e.endedAt === null || e.endedAt >= dayStart),
      unavailable,
    });
    return { snapshot, bytes: toJson(snapshot) };
  } finally {
    modelled.db.close();
  }
}

/**
 * Stores a snapshot unless one exists for its day (snapshots are immutable: never rewritten), then
 * rewrites `snapshots/index.json` from every stored snapshot. Returns whether it was written.
 */
export async function publishSnapshot(sink: Sink, day: string, bytes: string): Promise<boolean> {
  if (await sink.get(snapshotKey(day))) return false;
  await sink.put(snapshotKey(day), bytes);
  await writeSnapshotIndex(sink);
  return true;
}

/** Rewrites `snapshots/index.json` (SnapshotIndexSchema, newest first) from the stored `snapshots/<day>.json` files. */
export async function writeSnapshotIndex(sink: Sink): Promise<void> {
  const rows = [];
  for (const key of await sink.list("snapshots/")) {
    const day = /^snapshots\/(\d{4}-\d{2}-\d{2})\.json$/.exec(key)?.[1];
    if (!day) continue;
    const bytes = (await sink.get(key))!;
    const parsed = SnapshotSchema.safeParse(JSON.parse(Buffer.from(bytes).toString("utf8")));
    if (!parsed.success) { log("warn", "snapshots", "stored snapshot failed its schema; left out of the index", { key }); continue; }
    rows.push({ snapshotDate: day, buildId: parsed.data.buildId, methodologyVersions: parsed.data.methodologyVersions, contentHash: sha256(bytes), byteSize: bytes.byteLength, createdAt: parsed.data.generatedAt });
  }
  rows.sort((a, b) => b.snapshotDate.localeCompare(a.snapshotDate));
  await sink.put(SNAPSHOT_INDEX_KEY, toJson(SnapshotIndexSchema.parse({ snapshots: rows })));
}

/** One day of a backfill: `built` (with its build seconds) or `skipped` (already published). */
export interface BackfillStep { day: string; index: number; total: number; outcome: "built" | "skipped"; seconds: number }

/**
 * Backfills one immutable snapshot per UTC day from `from` to `to` (inclusive), in order, incrementally:
 * a day already stored is skipped. `onStep` reports each day (the CLI draws a progress bar from it).
 * Returns the steps. Throws on the first day whose build fails (the days before it stay published).
 */
export async function backfillSnapshots(from: string, to: string, opts: SnapshotOptions & { onStep?: (s: BackfillStep) => void }): Promise<BackfillStep[]> {
  const days = daysBetween(from, to);
  const steps: BackfillStep[] = [];
  for (const [i, day] of days.entries()) {
    const t0 = Date.now();
    let outcome: BackfillStep["outcome"] = "skipped";
    if (!(await opts.sink.get(snapshotKey(day)))) {
      const { bytes } = await composeSnapshot(day, opts);
      await publishSnapshot(opts.sink, day, bytes);
      outcome = "built";
    }
    const step = { day, index: i + 1, total: days.length, outcome, seconds: (Date.now() - t0) / 1000 };
    steps.push(step);
    opts.onStep?.(step);
  }
  return steps;
}

/** What verifySnapshot found: the stored and rebuilt sha256 and, when they differ, the first differing JSON paths. */
export interface SnapshotVerification { day: string; storedSha256: string | null; rebuiltSha256: string; identical: boolean; differences: string[] }

/** JSON paths (`a.b[3].c`) where two values differ, at most `limit`. */
export function jsonDifferences(a: unknown, b: unknown, path = "", limit = 20, out: string[] = []): string[] {
  if (out.length >= limit) return out;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || a === null || b === null || typeof a !== "object") {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${path || "(root)"}: ${JSON.stringify(a)?.slice(0, 80)} → ${JSON.stringify(b)?.slice(0, 80)}`);
    return out;
  }
  const keys = Array.isArray(a) ? [...Array(Math.max(a.length, (b as unknown[]).length)).keys()] : [...new Set([...Object.keys(a), ...Object.keys(b as object)])];
  for (const k of keys) {
    const sub = Array.isArray(a) ? `${path}[${k}]` : path ? `${path}.${k}` : String(k);
    jsonDifferences((a as Record<string, unknown>)[k as never], (b as Record<string, unknown>)[k as never], sub, limit, out);
  }
  return out;
}

/** Rebuilds the snapshot of `day` and compares it byte for byte with the stored one (null sha256 when none is stored). */
export async function verifySnapshot(day: string, opts: SnapshotOptions): Promise<SnapshotVerification> {
  const stored = await opts.sink.get(snapshotKey(day));
  const { bytes } = await composeSnapshot(day, opts);
  const rebuiltSha256 = sha256(bytes);
  const storedSha256 = stored ? sha256(stored) : null;
  const identical = storedSha256 === rebuiltSha256;
  const differences = stored && !identical ? jsonDifferences(JSON.parse(Buffer.from(stored).toString("utf8")), JSON.parse(bytes)) : [];
  return { day, storedSha256, rebuiltSha256, identical, differences };
}
