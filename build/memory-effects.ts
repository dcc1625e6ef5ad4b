import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Capture } from "../pipelines/sources/types.ts";
import { type BuildEffects, fixedClock, listCaptures } from "./effects.ts";
import type { Logger, LogLevel } from "./log.ts";
import { assertFolderPrefix, type PublishSink } from "./sinks/sink.ts";

/** A PublishSink held in a Map: key → bytes. Puts are atomic (nothing is ever half-written, so nothing is abandoned). */
export class MemorySink implements PublishSink {
  private readonly objects = new Map<string, Uint8Array>();

  async put(key: string, body: Uint8Array | string): Promise<void> {
    this.objects.set(key, typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body));
  }

  /** A copy of the stored bytes; null when the key does not exist. */
  async get(key: string): Promise<Uint8Array | null> {
    const v = this.objects.get(key);
    return v ? Buffer.from(v) : null;
  }

  async list(prefix: string): Promise<string[]> {
    return this.keys().filter((k) => k.startsWith(prefix));
  }

  async listDirs(prefix: string): Promise<string[]> {
    const dirs = new Set<string>();
    for (const k of this.keys()) {
      if (!k.startsWith(prefix)) continue;
      const rest = k.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash > 0) dirs.add(rest.slice(0, slash));
    }
    return [...dirs].sort();
  }

  async listAbandoned(): Promise<string[]> {
    return [];
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }

  async deletePrefix(prefix: string): Promise<void> {
    assertFolderPrefix(prefix);
    for (const k of this.keys()) if (k.startsWith(prefix)) this.objects.delete(k);
  }

  describe(key: string): string {
    return `memory://${key}`;
  }

  /** Every stored key, sorted (code-unit order, as FsSink and S3 list). */
  keys(): string[] {
    return [...this.objects.keys()].sort();
  }

  /** Every object as key → bytes (copies), in key order: the output tree of the builds published here. */
  tree(): Map<string, Uint8Array> {
    const out = new Map<string, Uint8Array>();
    for (const k of this.keys()) {
      const bytes = this.objects.get(k);
      if (bytes) out.set(k, Buffer.from(bytes));
    }
    return out;
  }
}

/** One line a collecting logger received. */
export interface LogRecord {
  level: LogLevel;
  stage: string;
  msg: string;
  extra: Record<string, unknown>;
}

/** A Logger that appends every line to `records` (and writes nothing). */
export function collectingLogger(): { logger: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  return {
    logger: (level, stage, msg, extra = {}) => {
      records.push({ level, stage, msg, extra });
    },
    records,
  };
}

/** The in-memory effects of memoryEffects, with handles for the test that made them. */
export interface MemoryBuildEffects extends BuildEffects {
  sink: MemorySink;
  /** Lines the build logged, in order. */
  logs: LogRecord[];
  /** Removes the scratch folder when memoryEffects created it. */
  dispose(): void;
}

/**
 * Effects for a build that touches no real storage: the given `captures` (selected at as-of like
 * recorded ones), a MemorySink (or `sink`), no warehouse, no on-chain ledger, a clock fixed at `nowMs`
 * (Unix ms, default 0: run ids then read `19700101T000000000Z-…`), a collecting logger, and a fresh
 * scratch folder under the OS temp dir (or `scratchDir`, which is then left for the caller to remove).
 */
export function memoryEffects(opts: {
  captures: readonly Capture[];
  nowMs?: number;
  sink?: MemorySink;
  scratchDir?: string;
}): MemoryBuildEffects {
  const { logger, records } = collectingLogger();
  const scratchDir = opts.scratchDir ?? mkdtempSync(join(tmpdir(), "ballast-memory-build-"));
  return {
    captures: listCaptures(opts.captures),
    warehouse: null,
    ledger: null,
    sink: opts.sink ?? new MemorySink(),
    scratchDir,
    clock: fixedClock(opts.nowMs ?? 0),
    logger,
    logs: records,
    dispose: () => {
      if (!opts.scratchDir) rmSync(scratchDir, { recursive: true, force: true });
    },
  };
}
