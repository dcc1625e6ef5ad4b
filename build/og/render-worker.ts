import { parentPort } from "node:worker_threads";
import { type OgNode, renderPng } from "./render.ts";

/** The render in progress: renders run one at a time (renderPng swaps the global fetch while it runs). */
let queue: Promise<void> = Promise.resolve();

/**
 * Worker-thread entry of OgRenderer (build/og/images.ts): renders each `{ id, node }` message with
 * renderPng, in arrival order, and answers `{ id, png, refused }` (PNG bytes transferred) or `{ id, error }`.
 */
parentPort?.on("message", ({ id, node }: { id: number; node: OgNode }) => {
  queue = queue.then(async () => {
    try {
      const { png, refused } = await renderPng(node);
      parentPort?.postMessage({ id, png, refused }, [png.buffer as ArrayBuffer]);
    } catch (err) {
      parentPort?.postMessage({ id, error: (err as Error).message });
    }
  });
});
