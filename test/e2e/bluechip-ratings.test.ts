import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCapture } from "../../build/capture.ts";
import { loadBuildConfig } from "../../build/config.ts";
import { BluechipRatingsSchema } from "../../site-data/bluechip-ratings.ts";
import { startBluechipServer } from "../helpers/bluechip-server.ts";
import { RECORDED_AS_OF } from "../helpers/build-once.ts";
import { must } from "../helpers/must.ts";
import { serveRecordedBuildWith } from "../helpers/served-build.ts";

// The real path end to end: `capture` against a local stand-in of the Bluechip backend writes
// raw/bluechip/<day>/… into the storage root, the recorded build as of 2025-09-07 reads it with the
// recorded captures, and the API serves the ratings (the default build without it answers 503:
// test/api/app.test.ts).
const OBSERVED = RECORDED_AS_OF - 3600;

let built: Awaited<ReturnType<typeof serveRecordedBuildWith>>;

beforeAll(async () => {
  built = await serveRecordedBuildWith("ballast-bluechip-e2e-", "ballast_bluechip", async (sink) => {
    const server = await startBluechipServer();
    try {
      await runCapture(loadBuildConfig({ BALLAST_BLUECHIP_URL: server.url }), sink, {
        now: () => OBSERVED * 1000,
        plan: ["usdc", "usdt", "dai", "gusd", "bold", "cetes", "frax", "nope"].map((slug) => ({
          endpoint: "bluechip.ratings",
          params: { slug },
        })),
      });
    } finally {
      await server.close();
    }
  });
});
afterAll(async () => {
  await built?.close();
});

const req = (path: string) => built.app.request(path, { headers: { "X-API-Key": built.token } });

describe("a build holding a Bluechip capture serves /api/bluechip-ratings", () => {
  it("loads the captures (bad rows counted) and publishes the artifact", () => {
    const source = must(
      built.manifest.sources.find((s) => s.endpoint === "bluechip.ratings"),
      "the bluechip.ratings source in the manifest",
    );
    expect(source).toMatchObject({
      status: "ok",
      rows: 6,
      dropped: { "grade-invalid": 1 },
      newestObservedAt: OBSERVED,
    });
    expect(source.captures.every((c) => c.origin === "live" && c.path.startsWith("raw/bluechip/2025-09-06/"))).toBe(
      true,
    );
    expect(built.manifest.files.find((f) => f.path === "site-data/bluechip-ratings.json")).toMatchObject({
      artifact: "bluechip-ratings",
      rows: 6,
      dataAsOf: OBSERVED,
      maxAgeSec: 43200,
    });
  });

  it("answers the ratings joined to stablecoin ids, the unmatched with reasons, and `_meta`", async () => {
    const r = await req("/api/bluechip-ratings");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, s-maxage=3600, max-age=300");
    expect(r.headers.get("x-data-updated-at")).toBe(String(OBSERVED));
    const body = await r.json();
    expect(body._meta).toMatchObject({ updatedAt: OBSERVED, status: "fresh" });
    const { _meta, ...payload } = body;
    const parsed = BluechipRatingsSchema.parse(payload);
    expect(parsed.updatedAt).toBe(OBSERVED);
    expect(parsed.ratings.map((x) => [x.stablecoinId, x.symbol, x.grade])).toEqual([
      ["dai-sky", "DAI", "A-"],
      ["gusd-gemini", "GUSD", "B+"],
      ["usdc-circle", "USDC", "A"],
      ["usdt-tether", "USDT", "C+"],
    ]);
    expect(parsed.unmatched.map((x) => [x.slug, x.reason, x.candidates])).toEqual([
      ["bold", "ambiguous-symbol", ["bold-liquity", "bold-liquity-legacy"]],
      ["cetes", "unknown-symbol", []],
    ]);
    const file = JSON.parse(
      readFileSync(join(built.dir, "builds", built.manifest.buildId, "site-data/bluechip-ratings.json"), "utf8"),
    );
    expect(file).toEqual(payload);
  });

  it("health reports the ratings cache and no longer lists the feature as not yet available", async () => {
    const h = await (await built.app.request("/api/health")).json();
    expect(h.caches["bluechip-ratings"]).toMatchObject({ maxAge: 43200, healthy: true });
    expect(h.warnings.some((w: string) => w.startsWith("not yet available") && w.includes("bluechip-ratings"))).toBe(
      false,
    );
    expect(h.circuits.bluechip).toMatchObject({ state: "closed" });
  });
});
