import { setFlagsFromString } from "node:v8";

/**
 * Sets how far (percent) V8 grows the heap past the live size its last full collection found
 * (`--heap-growing-percent`; 0 keeps V8's own factor, up to 300% on a machine with much memory). A
 * process-wide setting: the server entry (`HEAP_GROWING_PERCENT`) and the build CLI
 * (`BALLAST_HEAP_GROWING_PERCENT`) apply it at start; embedders choose their own.
 */
export function applyHeapGrowingPercent(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
