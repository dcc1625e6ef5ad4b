import type { Analytic } from "./contract.ts";
import { pegMonitor } from "./peg-monitor.ts";

/** Every TS analytic of the model DAG. Adding one = adding it here. */
export const ANALYTICS: Analytic[] = [pegMonitor];
