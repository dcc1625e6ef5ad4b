import type { BuildManifest } from "../../site-data/manifest.ts";
import { causesOf, check } from "./causes.ts";
import { isoMinute } from "./format.ts";
import type { Check, CircuitState } from "./types.ts";

/**
 * Circuit group of each circuit name: the independent upstream family the source's numbers derive
 * from, as each source module declares it (`lineage.family`, pipelines/sources/lineage.ts; a test
 * keeps both equal). Alchemy's daily prices copy CoinGecko's, so both are group `coingecko`;
 * Frankfurter serves ECB rates (`ecb`); the USDS status is read from Ethereum nodes like the on-chain
 * logs (`onchain`). Unknown names are their own group.
 */
export const CIRCUIT_GROUPS: Readonly<Record<string, string>> = {
  defillama: "defillama",
  coingecko: "coingecko",
  alchemy: "coingecko",
  binance: "binance",
  frankfurter: "ecb",
  onchain: "onchain",
  usds: "onchain",
  bluechip: "bluechip",
  "defillama-yields": "defillama",
  curve: "curve",
  "dex-subgraph": "dex-subgraph",
};

/** Open circuit groups from which the top-level status is `degraded` (spec 2.8). */
export const OPEN_GROUPS_DEGRADED = 3;

/** Circuit name (the source) of a manifest endpoint key `<source>.<entity>`. */
export function circuitOf(endpoint: string): string {
  const dot = endpoint.indexOf(".");
  return dot < 0 ? endpoint : endpoint.slice(0, dot);
}

/** Circuit group of a circuit name (CIRCUIT_GROUPS; unknown names are their own group). */
export function circuitGroup(circuit: string): string {
  return CIRCUIT_GROUPS[circuit] ?? circuit;
}

/**
 * One circuit per upstream source of the manifest (spec 2.8 `circuits`), keyed by source name
 * (`defillama`, `coingecko`, `alchemy`, `binance`, `frankfurter`, `onchain`).
 * - A state recorded by a live capture (`manifest.circuits[source]`, the HTTP client's breaker) is
 *   used as is.
 * - Otherwise (recorded builds, sources without an HTTP client) the state is derived from the
 *   source's captures in `manifest.sources` (every endpoint `<source>.*`), read in observation
 *   order as the calls of a breaker: a capture that loaded rows is a success, a rejected capture
 *   (`payload-rejected`, `parse-failed`) a failure. `consecutiveFailures` = rejected captures after
 *   the newest success; `state` = `open` when that count is > 0, else `closed` (a source with no
 *   capture at all made no call, so nothing failed: `closed`, `lastSuccessAt` null);
 *   `lastSuccessAt` = observation time of the newest capture that loaded rows, capped at the build's
 *   as-of (a history file recorded after as-of contributes only rows up to as-of).
 * Sorted by name.
 */
export function circuitsOf(m: Pick<BuildManifest, "asOf" | "sources" | "circuits">): Record<string, CircuitState> {
  const captures = new Map<string, { observedAt: number; loaded: boolean; failed: boolean }[]>();
  for (const name of Object.keys(m.circuits)) captures.set(name, []);
  for (const s of m.sources) {
    const list = captures.get(circuitOf(s.endpoint)) ?? [];
    for (const c of s.captures)
      list.push({ observedAt: c.observedAt, loaded: c.rows > 0, failed: c.rejected !== undefined });
    captures.set(circuitOf(s.endpoint), list);
  }
  const out: Record<string, CircuitState> = {};
  for (const [name, list] of [...captures.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const recorded = m.circuits[name];
    if (recorded) {
      out[name] = recorded;
      continue;
    }
    list.sort((a, b) => a.observedAt - b.observedAt);
    let lastSuccessAt: number | null = null;
    let consecutiveFailures = 0;
    for (const c of list) {
      if (c.loaded) {
        lastSuccessAt = Math.min(c.observedAt, m.asOf);
        consecutiveFailures = 0;
      } else if (c.failed) consecutiveFailures++;
    }
    out[name] = { state: consecutiveFailures > 0 ? "open" : "closed", consecutiveFailures, lastSuccessAt };
  }
  return out;
}

/**
 * Circuits of build `m` (section `circuits`, circuitsOf) and their groups: open circuits in
 * ≥ OPEN_GROUPS_DEGRADED groups (CIRCUIT_GROUPS) set status degraded (cause `circuit-groups-open`)
 * with a warning; fewer open groups are a note. Either names each open circuit's consecutive failures
 * and last success.
 */
export function circuitsCheck(
  m: Pick<BuildManifest, "asOf" | "sources" | "circuits">,
): Check<Record<string, CircuitState>> {
  const circuits = circuitsOf(m);
  const openGroups = new Map<string, string[]>();
  for (const [name, c] of Object.entries(circuits)) {
    if (c.state === "open") openGroups.set(circuitGroup(name), [...(openGroups.get(circuitGroup(name)) ?? []), name]);
  }
  if (!openGroups.size) return check(circuits);
  const many = openGroups.size >= OPEN_GROUPS_DEGRADED;
  const detail = [...openGroups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([g, names]) =>
        `${g} (${names
          .map((n) => {
            const lastSuccessAt = circuits[n].lastSuccessAt;
            return `${n}: ${circuits[n].consecutiveFailures} consecutive failures, last success ${lastSuccessAt === null ? "never" : isoMinute(lastSuccessAt)}`;
          })
          .join("; ")})`,
    );
  const warning = `circuit groups open (${many ? "sets status degraded" : `no effect on status below ${OPEN_GROUPS_DEGRADED} groups`}): ${detail.join(", ")}. Their data is carried from the last successful capture.`;
  if (!many) return check(circuits, { notes: [warning] });
  return check(circuits, {
    causes: causesOf(
      "degraded",
      "circuit-groups-open",
      `${openGroups.size} circuit groups open: ${[...openGroups.keys()].sort().join(", ")}`,
    ),
    statusWarnings: [warning],
  });
}
