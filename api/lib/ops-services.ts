import type { ClockMode } from "./clock.ts";
import type { DiscoveryStore } from "./discovery.ts";
import type { JobRunner } from "./jobs.ts";
import type { KeyStore } from "./key-store.ts";
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

/** A handler's answer: JSON body and status (default 200). */
export interface AdminResult {
  status?: 200 | 201 | 202;
  body: unknown;
}
