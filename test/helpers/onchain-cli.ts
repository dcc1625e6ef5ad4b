import { vi } from "vitest";
import { runOnchainCli } from "../../build/onchain-cli.ts";

/**
 * Captures stdout and runs the onchain CLI (build/onchain-cli.ts) in-process: `run(...args)` appends
 * `extraArgs` (ledger, registry or capture dir), returns the exit code and the JSON printed by that
 * run; `printed` is what was printed since `clear`; `restore` gives stdout back (call it in a `finally`).
 */
export function onchainCliRunner(extraArgs: string[]) {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const run = async (...args: string[]) => {
    out.length = 0;
    const code = await runOnchainCli([...args, ...extraArgs]);
    return { code, json: JSON.parse(out.join("")) };
  };
  return {
    run,
    printed: () => out.join(""),
    clear: () => {
      out.length = 0;
    },
    restore: () => spy.mockRestore(),
  };
}
