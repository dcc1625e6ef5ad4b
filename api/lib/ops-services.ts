import type { ClockMode } from "./clock.ts";
import type { DiscoveryStore } from "./discovery.ts";
import type { JobRunner } from "./jobs.ts";
import type { KeyStore } from "./key-store.ts";
import { apiLog } from "./log.ts";
import type { MaintenanceGate } from "./maintenance.ts";
import type { OperatorIdentity } from "./ops-access.ts";
import type { PublishedStore } from "./published.ts";

/** What operator-route handlers use (api/routes/admin.ts); `createOpsApp` wires it. */
export interface OpsServices {
  keys: KeyStore;
  /** The published builds (discovery candidates, stability-index defaults). */
  store: PublishedStore;
  clockMode: ClockMode;
  /** Wall clock (ms). */
  nowMs: () => number;
  jobs: JobRunner;
  discovery: DiscoveryStore;
  maintenance: MaintenanceGate;
  /** On-chain ledger the on-chain jobs open (`--ledger`). */
  ledgerPath: string;
  /** Data dir the build jobs publish into (the one the public listener serves). */
  dataDir: string;
  /** How long a job request waits for the job before answering 202 (ms). */
  jobWaitMs: number;
}

/** What a handler of an operator route receives: validated inputs, the services and who asked. */
export interface AdminContext {
  params: Record<string, string>;
  /** Query parameters as the route's `query` schema output them (handlers read them through that schema's type). */
  query: Record<string, unknown>;
  /** Validated JSON body (routes with a `body` schema: its output), else undefined. */
  body: unknown;
  ops: OpsServices;
  operator: OperatorIdentity;
}

/**
 * What an operator action changed, for the operator log: the thing changed (`target`, e.g. a key id)
 * and the values of its changed fields before and after (`before` null for a creation). Never secrets.
 */
export interface OperatorChange {
  target: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown>;
}

/** A handler's answer: JSON body and status (default 200), and what it changed (logged, never sent). */
export interface AdminResult {
  status?: 200 | 201 | 202;
  body: unknown;
  change?: OperatorChange;
}

/**
 * The change between two states of `target`: only the fields whose values differ (compared as JSON),
 * with their values before and after. Fields absent from one side count as undefined.
 */
export function changeOf(
  target: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): OperatorChange {
  const was: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[k]) === JSON.stringify(after[k])) continue;
    was[k] = before[k] ?? null;
    now[k] = after[k] ?? null;
  }
  return { target, before: was, after: now };
}

/**
 * One operator-log line per change an operator action made (stderr JSON, `msg: "operator change"`):
 * who (`operator`, `via`), the action, and the change's target, before and after. Written once the
 * change took effect; an idempotent replay changes nothing and writes none.
 */
export function auditChange(operator: OperatorIdentity, action: string, change: OperatorChange): void {
  apiLog("info", "ops", "operator change", {
    operator: operator.subject,
    via: operator.kind,
    action,
    target: change.target,
    before: change.before,
    after: change.after,
  });
}
