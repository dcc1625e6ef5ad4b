/**
 * Issue 31 item 5: `make help` (the default goal, a newcomer's first command) prints the Makefile's target
 * descriptions with `$(PORT)` replaced by the port in effect, never the make variable literally.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const help = (...args: string[]) =>
  execFileSync("make", ["--no-print-directory", "help", ...args], { cwd: root, encoding: "utf8" });

describe("make help", () => {
  it("names the default port 8787 and no make variable", () => {
    const out = help();
    expect(out).not.toMatch(/\$\(/);
    expect(out).toMatch(/^ {2}make run +.*serve on 127\.0\.0\.1:8787 /m);
  });

  it("names the port given on the command line", () => {
    const out = help("PORT=9001");
    expect(out).not.toMatch(/\$\(/);
    expect(out).toMatch(/^ {2}make run +.*serve on 127\.0\.0\.1:9001 /m);
  });
});
