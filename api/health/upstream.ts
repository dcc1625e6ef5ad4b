import type { BuildManifest } from "../../site-data/manifest.ts";
import { check } from "./causes.ts";
import { age, isoMinute } from "./format.ts";
import type { Check } from "./types.ts";

/**
 * Freshness of each upstream feed at the build's as-of (manifest `sources`): feeds older than their
 * refresh budget (`stale`) and feeds without any capture at or before as-of (`missing`) are notes,
 * without effect on status (the status rules on caches and the list snapshot cover their effect).
 */
export function upstreamCheck(m: Pick<BuildManifest, "sources" | "asOf">): Check {
  const notes: string[] = [];
  const ended = m.sources.flatMap((s) => {
    const at = s.newestObservedAt;
    return s.status === "stale" && at !== null
      ? [`${s.endpoint} ${isoMinute(at)} (${age(Math.max(0, m.asOf - at))} before as-of)`]
      : [];
  });
  if (ended.length)
    notes.push(
      `upstream feeds older than their refresh budget at as-of (no effect on status): ${ended.join(", ")}. Nothing newer than these captures comes from them: recorded archives end there, or live captures failed since.`,
    );
  const absent = m.sources.filter((s) => s.status === "missing").map((s) => s.endpoint);
  if (absent.length)
    notes.push(
      `upstream feeds without any capture at or before as-of (no effect on status): ${absent.join(", ")}. Nothing from them is in this build; prices and supply rest on the other sources (see \`consensusSources\` and \`supplySource\` in /api/stablecoins).`,
    );
  return check(undefined, { notes });
}
