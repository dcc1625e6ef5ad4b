import type { Analytic } from "./contract.ts";
import { depegResolver } from "./depeg-resolver.ts";
import { pegMonitor } from "./peg-monitor.ts";
import { pegSummary } from "./peg-summary.ts";
import { reportCards } from "./report-cards.ts";

/** Every TS analytic of the model DAG. Adding one = adding it here. */
export const ANALYTICS: Analytic[] = [pegMonitor, pegSummary, depegResolver, reportCards];
