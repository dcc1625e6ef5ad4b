import type { Check, HealthStatus, StatusCause } from "./types.ts";

/**
 * Cause families whose incidents the public status history shows (spec 2.9: cache ratio, FX cached
 * fallback, public mint/burn causes, open circuit groups, db unhealthy; `no-build` is every cache
 * missing). Publication coverage (a stale or missing list snapshot, skipped empty captures) degrades
 * `/api/health` but is not among the spec's public-impact causes.
 */
export const PUBLIC_IMPACT_CAUSES: Readonly<Record<string, boolean>> = {
  "no-build": true,
  "db-unhealthy": true,
  "limiter-unhealthy": true,
  cache: true,
  "fx-cached-fallback": true,
  "circuit-groups-open": true,
  "mint-burn-lane": true,
  "publication-coverage": false,
  "cron-error": true,
  "cron-unhealthy": true,
};

/** Whether a cause code (`<family>` or `<family>:<detail>`) has public impact (PUBLIC_IMPACT_CAUSES; unknown families: false). */
export function causePublicImpact(code: string): boolean {
  return PUBLIC_IMPACT_CAUSES[code.split(":")[0]] ?? false;
}

/** The causes an impact on the status adds: none when `healthy`, else one cause `code` (public impact by its family). */
export function causesOf(status: HealthStatus, code: string, detail: string): StatusCause[] {
  return status === "healthy" ? [] : [{ code, status, publicImpact: causePublicImpact(code), detail }];
}

const SEVERITY: Record<HealthStatus, number> = { healthy: 0, degraded: 1, stale: 2 };

/** The top-level status of a list of causes: the worst status any raises to, `healthy` without any. */
export function worstStatus(causes: readonly StatusCause[]): HealthStatus {
  return causes.reduce<HealthStatus>((w, c) => (SEVERITY[c.status] > SEVERITY[w] ? c.status : w), "healthy");
}

/** A check result: `section`, plus optional causes and warnings (empty lists when omitted). */
export function check<S>(section: S, found: Partial<Omit<Check<S>, "section">> = {}): Check<S> {
  return { section, causes: found.causes ?? [], statusWarnings: found.statusWarnings ?? [], notes: found.notes ?? [] };
}
