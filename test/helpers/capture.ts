import type { Capture } from "../../pipelines/sources/types.ts";

/**
 * A recorded capture of `endpoint` (no params) observed at `observedAt` (unix seconds) holding
 * `payload`, with a placeholder path `<endpoint>.json` and hash: what the load stage reads.
 */
export const recordedCapture = (endpoint: string, payload: unknown, observedAt: number): Capture => ({
  endpoint,
  params: {},
  observedAt,
  origin: "recorded",
  path: `${endpoint}.json`,
  sha256: "x",
  payload,
});
