import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { restoreBuild } from "../../build/restore.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { publishFakeBuild } from "../helpers/ops.ts";

// `build/cli.ts restore --build ID`: a stored, complete build serves again; an incomplete or altered one never does.
const dir = mkdtempSync(join(tmpdir(), "ballast-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pointer = () =>
  JSON.parse(readFileSync(join(dir, "latest.json"), "utf8")) as { buildId: string; manifest: string };

describe("restoreBuild", () => {
  it("moves latest.json back to a stored build after checking every file against its manifest", async () => {
    publishFakeBuild(dir, "old-build", [], { "site-data/extra.json": { a: 1 } });
    publishFakeBuild(dir, "new-build", []);
    expect(pointer().buildId).toBe("new-build");
    const r = await restoreBuild(new FsSink(dir), "old-build");
    expect(r).toMatchObject({ buildId: "old-build", previousBuildId: "new-build", filesChecked: 2 });
    expect(pointer()).toMatchObject({ buildId: "old-build", manifest: "builds/old-build/manifest.json" });
  });

  it("refuses an unknown, incomplete or altered build and leaves the pointer alone", async () => {
    const sink = new FsSink(dir);
    await expect(restoreBuild(sink, "nope")).rejects.toThrow(/build nope: no manifest/);
    writeFileSync(join(dir, "builds/new-build/site-data/stablecoins.json"), '{"peggedAssets":[{}]}');
    await expect(restoreBuild(sink, "new-build")).rejects.toThrow(
      /site-data\/stablecoins.json does not match its manifest sha256/,
    );
    rmSync(join(dir, "builds/new-build/site-data/stablecoins.json"));
    await expect(restoreBuild(sink, "new-build")).rejects.toThrow(/site-data\/stablecoins.json is missing/);
    expect(pointer().buildId).toBe("old-build");
  });
});
