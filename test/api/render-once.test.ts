import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildRecorded } from "../helpers/build-once.ts";
import { serveDir } from "../helpers/served-build.ts";

/**
 * A time-dependent answer (a body with `_meta`, re-rendered each second) is rendered once per cache
 * key, build and second, however many requests arrive while it renders: under load every request of
 * a new second used to render the whole list again.
 */
let served: Awaited<ReturnType<typeof serveDir>>;
let clockMs = Date.now();

beforeAll(async () => {
  const { dir } = await buildRecorded("ballast-render-once-");
  served = await serveDir(dir, "ballast_render_once", { nowMs: () => clockMs });
});
afterAll(async () => {
  await served?.close();
});

describe("one render per key and second", () => {
  it("concurrent requests of a new second share one render of /api/stablecoins, and get the same bytes", async () => {
    const path = "/api/stablecoins";
    // Cached from its second request (admission).
    for (let i = 0; i < 2; i++) expect((await served.req(path)).status).toBe(200);
    const build = await served.store.build();
    if (!build) throw new Error("no published build");
    let renders = 0;
    const dataAsOf = build.dataAsOf.bind(build);
    build.dataAsOf = (p: string) => {
      renders++;
      return dataAsOf(p);
    };
    try {
      clockMs += 1000; // the next second: the cached body's `_meta` is out of date
      const answers = await Promise.all(Array.from({ length: 8 }, () => served.req(path)));
      const bodies = await Promise.all(answers.map(async (r) => Buffer.from(await r.arrayBuffer())));
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(new Set(bodies.map((b) => b.toString("base64"))).size).toBe(1);
      expect(renders).toBe(1);
      // A later second renders again (once).
      clockMs += 1000;
      await Promise.all(Array.from({ length: 4 }, () => served.req(path)));
      expect(renders).toBe(2);
    } finally {
      build.dataAsOf = dataAsOf;
    }
  });
});
