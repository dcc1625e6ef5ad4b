import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyHeapGrowingPercent } from "../lib/heap-growth.ts";
import { generateRegistry } from "../pipelines/registry/generate-registry.ts";
import { REGISTRY_PATH } from "../pipelines/registry/registry.ts";
import { runCapture } from "./capture.ts";
import { runOnchainCli } from "./onchain-cli.ts";
import { assertCaptureDir } from "./captures.ts";
import { loadBuildConfig } from "./config.ts";
import { buildFingerprint, recordBuildInputs, unchangedBuild } from "./fingerprint.ts";
import { restoreBuild } from "./restore.ts";
import { runBuild } from "./run-build.ts";
import { runSchedule } from "./schedule.ts";
import { backfillSnapshots, type BackfillStep, verifySnapshot } from "./snapshots.ts";
import { createSink } from "./sinks/create-sink.ts";

/**
 * Default as-of of a recorded build, chosen by measurement (docs/build.md, "Default as-of"
 * table): 00:00 UTC after the newest recorded DefiLlama list (open-defi-data, 2026-09-02 11:57 UTC), the
 * day at which the most routes serve data and no current figure is older than its freshness window.
 */
export const RECORDED_AS_OF = "2026-09-03T00:00:00Z";

const USAGE = `usage: tsx build/cli.ts <command> [options]
  build [--as-of ISO] [--live]   build and publish (default as-of: ${RECORDED_AS_OF}; --live: now)
        [--if-changed]           skip when the serving build has the same inputs and code (make run)
  build --from DAY --to DAY      backfill one immutable dated snapshot per UTC day (days already published are skipped)
  verify-snapshot --date DAY     rebuild the snapshot of DAY and compare it byte for byte with the stored one, then re-hash
        [--chain-head HASH]      every indexed day's stored files and recompute the index's hash chain (exit 1 on a difference;
                                 --chain-head: a chainHash you hold must still be in the chain)
  restore --build ID             serve a stored build again (rollback): checks its files against its manifest and the dated
                                 files its datapackages name (never rewritten), then moves latest.json
  capture                        fetch every live upstream once and write raw captures
  schedule [--once JOB[,JOB]]    live mode: run the jobs on their cadences (prices-peg 15 min, freezes 20 min, markets hourly, daily 00:05 UTC),
                                 capture → build as of now → publish, run log in scheduler/ (docs/runbooks/running-live.md); --once: each job once
  registry                       regenerate pipelines/registry/registry.json from the recorded metadata
  onchain <job> [--param value]  on-chain ingestion and its jobs (ingest, reset-blacklist-sync, debug-sync-state, …; see build/onchain-cli.ts)`;

/** One backfill step on stderr: a redrawn progress bar on a terminal, one line per day otherwise. */
function drawProgress(s: BackfillStep): void {
  const width = 30,
    done = Math.round((s.index / s.total) * width);
  const line = `[${"#".repeat(done)}${".".repeat(width - done)}] ${s.index}/${s.total} ${s.day} ${s.outcome === "built" ? `built in ${s.seconds.toFixed(1)} s` : "already published"}`;
  process.stderr.write(process.stderr.isTTY ? `\r${line}${s.index === s.total ? "\n" : ""}` : `${line}\n`);
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(): Promise<void> {
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === "onchain") {
    process.exitCode = await runOnchainCli(args);
    return;
  }
  const config = loadBuildConfig();
  applyHeapGrowingPercent(config.BALLAST_HEAP_GROWING_PERCENT);
  if (cmd === "build" && (flag(args, "--from") || flag(args, "--to"))) {
    const from = flag(args, "--from");
    if (!from) throw new Error("--from: required with --to (YYYY-MM-DD)");
    const to = flag(args, "--to") ?? from;
    const steps = await backfillSnapshots(from, to, {
      captureDir: config.BALLAST_CAPTURE_DIR,
      sink: createSink(config),
      onStep: drawProgress,
    });
    const built = steps.filter((s) => s.outcome === "built").length;
    process.stdout.write(
      `snapshots ${from} → ${to}: ${built} built, ${steps.length - built} already published (skipped)\n`,
    );
  } else if (cmd === "verify-snapshot") {
    const day = flag(args, "--date");
    if (!day) throw new Error("--date: required (YYYY-MM-DD)");
    const v = await verifySnapshot(day, {
      captureDir: config.BALLAST_CAPTURE_DIR,
      sink: createSink(config),
      expectChainHash: flag(args, "--chain-head"),
    });
    if (v.storedSha256 === null)
      process.stdout.write(`no stored snapshot for ${day}; rebuilt sha256 ${v.rebuiltSha256}\n`);
    else if (v.identical)
      process.stdout.write(
        `snapshot ${day} reproduced: sha256 ${v.rebuiltSha256} (identical); digest sha256 ${v.digest.rebuiltSha256} (identical)\n`,
      );
    else {
      process.stdout.write(
        `snapshot ${day} differs: snapshot stored ${v.storedSha256}, rebuilt ${v.rebuiltSha256}; digest stored ${v.digest.storedSha256 ?? "none"}, rebuilt ${v.digest.rebuiltSha256}\n`,
      );
      process.stdout.write(`${v.differences.map((d) => `  ${d}`).join("\n")}\n`);
    }
    const c = v.chain;
    if (c.ok)
      process.stdout.write(
        `chain: ${c.rows} rows verified, ${c.filesChecked} stored files re-hashed${c.pruned.length ? `, ${c.pruned.length} dataset day files pruned by retention` : ""}; head ${c.head ? `${c.head.snapshotDate} #${c.head.chainIndex} ${c.head.chainHash}` : "none"}\n`,
      );
    else {
      const first = c.problems[0];
      process.stdout.write(
        `chain broken: first at ${first.date}: ${first.file}: ${first.reason} (${c.problems.length} problem${c.problems.length === 1 ? "" : "s"} over ${c.rows} rows)\n`,
      );
      process.stdout.write(`${c.problems.map((p) => `  ${p.date} ${p.file}: ${p.reason}`).join("\n")}\n`);
    }
    process.exitCode = v.identical && c.ok ? 0 : 1;
  } else if (cmd === "build") {
    const asOfText = args.includes("--live") ? new Date().toISOString() : (flag(args, "--as-of") ?? RECORDED_AS_OF);
    const asOf = Math.floor(Date.parse(asOfText) / 1000);
    if (!Number.isFinite(asOf)) throw new Error(`--as-of: not an ISO timestamp: ${asOfText}`);
    const onchainLedgerPath = config.BALLAST_ONCHAIN_LEDGER ?? join(config.BALLAST_DATA_DIR, "onchain.duckdb");
    // --if-changed (make run): skip the build when inputs and code are those of the build serving (fs storage).
    const fingerprint =
      args.includes("--if-changed") && config.STORAGE_DRIVER === "fs"
        ? buildFingerprint({
            asOf,
            captureDir: config.BALLAST_CAPTURE_DIR,
            dataDir: config.BALLAST_DATA_DIR,
            onchainLedgerPath,
          })
        : null;
    const same = fingerprint ? unchangedBuild(config.BALLAST_DATA_DIR, fingerprint) : null;
    if (same) {
      process.stdout.write(
        `build ${same} is current: inputs and code unchanged since it was built (not rebuilding; \`make build\` forces a build)\n`,
      );
      return;
    }
    const result = await runBuild({
      asOf,
      captureDir: config.BALLAST_CAPTURE_DIR,
      sink: createSink(config),
      warehousePath: config.BALLAST_WAREHOUSE ?? join(config.BALLAST_DATA_DIR, "warehouse.duckdb"),
      keepBuilds: config.BALLAST_KEEP_BUILDS,
      onchainLedgerPath,
      scratchDir: config.BALLAST_SCRATCH_DIR,
    });
    const { manifest: m, manifestLocation, reused, runKey } = result;
    if (fingerprint) recordBuildInputs(config.BALLAST_DATA_DIR, fingerprint, m.buildId);
    const dropped = m.sources.reduce((s, x) => s + Object.values(x.dropped).reduce((a, b) => a + b, 0), 0);
    process.stdout.write(
      `built ${m.buildId}${reused ? " (identical build reused)" : ""}: ${m.files.length} files, ${dropped} malformed upstream values dropped (manifest: ${manifestLocation}; this run: ${runKey})\n`,
    );
    const ds = result.daySnapshot;
    if (ds)
      process.stdout.write(
        ds.outcome === "failed"
          ? `dated snapshot ${ds.day}: not published: ${ds.error}\n`
          : `dated snapshot ${ds.day}: ${ds.outcome === "published" ? "published (snapshot, digest, DuckDB file, index rows)" : "already published (kept as stored)"}\n`,
      );
    if (ds?.outcome === "failed") process.exitCode = 1; // the build serves; the day's record is missing
    if (args.includes("--report-rss")) process.stdout.write(`maxRSS_KB ${process.resourceUsage().maxRSS}\n`);
  } else if (cmd === "restore") {
    const id = flag(args, "--build");
    if (!id) throw new Error("--build: required (a build id under builds/, e.g. 20250907T0000Z-9db156a)");
    const r = await restoreBuild(createSink(config), id);
    process.stdout.write(
      `serving ${r.buildId} (as of ${new Date(r.asOf * 1000).toISOString()}) again; was ${r.previousPointerUnreadable ? "unreadable (latest.json was corrupt)" : (r.previousBuildId ?? "none")}; ${r.filesChecked} files checked against the manifest, ${r.datedChecked} dated files against its datapackages${r.datedRepublished.length ? ` (${r.datedRepublished.length} pruned ones written back)` : ""}\n`,
    );
  } else if (cmd === "capture") {
    const written = await runCapture(config, createSink(config));
    process.stdout.write(`captured ${written.length} payloads\n`);
  } else if (cmd === "schedule") {
    const once = flag(args, "--once")
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    await runSchedule(config, createSink(config), { once });
    if (!once) process.exit(0); // a run still going after the grace period was recorded aborted; do not wait for it
  } else if (cmd === "registry") {
    assertCaptureDir(config.BALLAST_CAPTURE_DIR);
    const reg = generateRegistry(config.BALLAST_CAPTURE_DIR);
    writeFileSync(REGISTRY_PATH, `${JSON.stringify(reg, null, 1)}\n`);
    process.stdout.write(`registry: ${reg.coins.length} coins, ${reg.chains.length} chains → ${REGISTRY_PATH}\n`);
  } else {
    process.stdout.write(`${USAGE}\n`);
    process.exitCode = cmd ? 1 : 0;
  }
}

// One plain line on stderr whatever BALLAST_LOG says (e.g. a missing capture dir names BALLAST_CAPTURE_DIR).
main().catch((err: Error) => {
  process.stderr.write(`${err.name === "Error" ? "error" : err.name}: ${err.message}\n`);
  process.exitCode = 1;
});
