/**
 * Fallback API entry for `make bench`, used only when `api/server.ts --dev-key` does not honour
 * DEV_KEY_RATE_LIMIT (its dev key then hits 429 under load and the numbers mean nothing). Starts
 * the same `startServer` from the env config with a dev key limited to DEV_KEY_RATE_LIMIT per
 * minute and prints `API key: …` like the real entry.
 */
import { loadApiConfig } from "../../api/config.ts";
import * as server from "../../api/server.ts";

// Loosely typed on purpose: the options of startServer are being reworked; extra options are ignored.
type Start = (config: unknown, opts: Record<string, unknown>) => Promise<{ devKey?: string; close(): Promise<void> }>;
const start = server.startServer as unknown as Start;
const { devKey, close } = await start(loadApiConfig(), {
  devKey: true,
  devKeyLimitPerMinute: Number(process.env.DEV_KEY_RATE_LIMIT ?? 1e9),
});
process.stdout.write(`API key: ${devKey}\n`);
const stop = () => {
  void close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
