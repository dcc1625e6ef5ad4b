import type { BuildManifest } from "../../site-data/manifest.ts";
import { causesOf, check } from "./causes.ts";
import { age, isoMinute } from "./format.ts";
import type { Check } from "./types.ts";

/** Manifest source of the stablecoin list snapshot (current supply and the coin universe). */
const LIST_ENDPOINT = "defillama.stablecoins";

/**
 * Publication coverage of build `m`: a stablecoin list snapshot stale or missing at as-of (cause
 * `publication-coverage:list-snapshot`) and recorded captures skipped as empty
 * (`publication-coverage:skipped-captures`, manifest `skippedCaptures`) each set status degraded,
 * with a warning saying what is missing from the build.
 */
export function coverageCheck(m: Pick<BuildManifest, "sources" | "asOf" | "skippedCaptures">): Check {
  const found = check(undefined);
  const list = m.sources.find((s) => s.endpoint === LIST_ENDPOINT);
  if (list && list.status !== "ok") {
    found.causes.push(
      ...causesOf(
        "degraded",
        "publication-coverage:list-snapshot",
        `stablecoin list snapshot ${list.newestObservedAt === null ? "missing" : "stale"} at as-of`,
      ),
    );
    found.statusWarnings.push(
      list.newestObservedAt === null
        ? "stablecoin list snapshot missing (sets status degraded: publication coverage incomplete): no DefiLlama /stablecoins capture at or before as-of; current supply and the coin universe come from supply history (points at most 3 days old), so coins without recent history are missing from /api/stablecoins."
        : `stablecoin list snapshot stale (sets status degraded: publication coverage incomplete): the newest DefiLlama /stablecoins capture is from ${isoMinute(list.newestObservedAt)}, ${age(Math.max(0, m.asOf - list.newestObservedAt))} before as-of; current supply and the coin universe are as of that capture.`,
    );
  }
  // Recorded captures skipped as empty: their figures are missing from this build.
  const skippedCaptures = m.skippedCaptures ?? [];
  if (skippedCaptures.length) {
    found.causes.push(
      ...causesOf(
        "degraded",
        "publication-coverage:skipped-captures",
        `${skippedCaptures.length} empty recorded capture(s) skipped`,
      ),
    );
    found.statusWarnings.push(
      `recorded captures empty and skipped (sets status degraded: publication coverage incomplete): ${skippedCaptures.map((c) => `${c.file} (${c.endpoint}, ${c.reason})`).join("; ")}. Nothing from them is in this build; figures that rest on them fall back to other sources or are missing (manifest \`skippedCaptures\`).`,
    );
  }
  return found;
}
