/**
 * Generic, public-safe reasons a dependency (Postgres, PGlite, Redis) failed. Health and other public
 * bodies report only these words, never a driver's message (which names hosts, ports, roles or SQL);
 * the full message goes to the process log.
 */
export type DependencyReason =
  | "timeout"
  | "connection refused"
  | "connection lost"
  | "host not found"
  | "authentication failed"
  | "query failed"
  | "circuit open"
  | "unavailable";

const CODE_REASONS: Record<string, DependencyReason> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection lost",
  EPIPE: "connection lost",
  ETIMEDOUT: "timeout",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  // Postgres SQLSTATEs: admin shutdown, crash shutdown, cannot connect now, query cancelled (statement_timeout)
  "57P01": "connection lost",
  "57P02": "connection lost",
  "57P03": "connection refused",
  "57014": "timeout",
};

/**
 * The generic reason of a dependency failure (walks `cause` chains): `timeout` for deadlines and
 * statement timeouts, `connection refused` / `connection lost` / `host not found` for socket and
 * session errors, `authentication failed` for SQLSTATE class 28, `query failed` for any other SQLSTATE,
 * else `unavailable`. An error carrying its own `reason` (e.g. `StateStoreUnavailableError`) keeps it.
 */
export function dependencyReason(err: unknown): DependencyReason {
  for (
    let e = err as { reason?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.reason === "string" && isReason(e.reason)) return e.reason;
    const code = typeof e.code === "string" ? e.code : "";
    if (CODE_REASONS[code]) return CODE_REASONS[code];
    if (/^28/.test(code) && code.length === 5) return "authentication failed";
    const msg = typeof e.message === "string" ? e.message : "";
    if (/timeout|timed out|no answer within/i.test(msg)) return "timeout";
    if (
      /Connection terminated|terminating connection|socket hang up|Client has encountered a connection error|Connection is closed|Stream isn't writeable/i.test(
        msg,
      )
    )
      return "connection lost";
    if (/ECONNREFUSED/.test(msg)) return "connection refused";
    if (/^[0-9A-Z]{5}$/.test(code)) return "query failed";
  }
  return "unavailable";
}

const REASONS = new Set<string>([
  "timeout",
  "connection refused",
  "connection lost",
  "host not found",
  "authentication failed",
  "query failed",
  "circuit open",
  "unavailable",
]);
const isReason = (s: string): s is DependencyReason => REASONS.has(s);
