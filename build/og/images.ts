import { depegLedgerArtifact, DepegLedgerSchema } from "../../site-data/depeg-events.ts";
import { OG_STABLECOIN_LIMIT, type OgImageName, ogPath } from "../../site-data/og-images.ts";
import { pegSummaryArtifact, PegSummaryPayloadSchema } from "../../site-data/peg-summary.ts";
import { SafetyGradesPayloadSchema, safetyGradesArtifact } from "../../site-data/report-cards.ts";
import { stabilityIndexArtifact, StabilityIndexFileSchema } from "../../site-data/stability-index.ts";
import { stablecoinDetailArtifact } from "../../site-data/stablecoin-detail.ts";
import { stablecoinSummaryArtifact, StablecoinSummariesSchema } from "../../site-data/stablecoin-summary.ts";
import { StablecoinsPayloadSchema, stablecoinsArtifact } from "../../site-data/stablecoins.ts";
import { type Body, emittedPayload } from "../stages/emit.ts";
import { depegCard, safetyScoresCard, stabilityIndexCard, stablecoinCard } from "./cards.ts";
import { Worker } from "node:worker_threads";
import type { OgImageCache } from "./cache.ts";
import type { OgNode } from "./render.ts";

/** One rendered image: its build path, which image it is, the PNG bytes. */
export interface OgImage {
  path: string;
  name: OgImageName;
  png: Uint8Array;
}

/** What rendering a build's images produced: the images, the images left out (and why), how many were drawn vs cached, timing. */
export interface OgRenderResult {
  images: OgImage[];
  /** `<path>: <reason>` of every image not published because its data is missing in the build. */
  skipped: string[];
  /** URLs the renderer asked for and was refused (glyphs missing from the bundled font). */
  refused: string[];
  /** Images drawn by the renderer in this call. */
  rendered: number;
  /** Images whose bytes came from the cache (OgImageCache), not drawn. */
  cached: number;
  /** Wall time spent rendering, cache look-ups and writes included (ms). */
  renderMs: number;
}

/** One image to render: which, its build path, its node tree (null: its inputs are missing), and why it would be missing. */
export interface OgJob {
  name: OgImageName;
  path: string;
  node: () => OgNode | null;
  missing: string;
}

/**
 * The images of a build as node trees, from its published site-data payloads (`files`: path → body of
 * the files emitted so far, JSON text, possibly spooled), in render order. Per coin: one image for each of the OG_STABLECOIN_LIMIT
 * largest coins (current circulating supply, USD) that have a stablecoin detail file and a summary entry. Index images: safety scores (needs safety-grades, summary and the
 * stablecoin list `/api/stablecoins` serves, whose coins it counts), depeg (needs the depeg ledger), stability index (needs a current reading).
 */
export function ogJobs(files: ReadonlyMap<string, Body>, asOf: number): OgJob[] {
  const summaries = emittedPayload(files, stablecoinSummaryArtifact, StablecoinSummariesSchema);
  const peg = emittedPayload(files, pegSummaryArtifact, PegSummaryPayloadSchema);
  const grades = emittedPayload(files, safetyGradesArtifact, SafetyGradesPayloadSchema);
  const depeg = emittedPayload(files, depegLedgerArtifact, DepegLedgerSchema);
  const stability = emittedPayload(files, stabilityIndexArtifact, StabilityIndexFileSchema);
  const list = emittedPayload(files, stablecoinsArtifact, StablecoinsPayloadSchema);

  const jobs: OgJob[] = [];
  const [prefix, suffix] = stablecoinDetailArtifact.outputs.main.path.split("{id}");
  const ids = [...files.keys()]
    .filter((p) => p.startsWith(prefix) && p.endsWith(suffix))
    .map((p) => p.slice(prefix.length, -suffix.length))
    .sort();
  const pegById = new Map((peg?.coins ?? []).map((c) => [c.id, c]));
  const gradeById = new Map((grades?.grades ?? []).map((g) => [g.id, g]));
  const supply = (id: string) => summaries?.[id]?.supplyUsd.current ?? null;
  const largest = ids
    .flatMap((id) => {
      const s = supply(id);
      return s === null ? [] : [{ id, s }];
    })
    .sort((a, b) => b.s - a.s || a.id.localeCompare(b.id))
    .slice(0, OG_STABLECOIN_LIMIT)
    .map(({ id }) => id)
    .sort();
  for (const id of largest) {
    jobs.push({
      name: "stablecoin",
      path: ogPath("stablecoin", id),
      missing: "no summary entry",
      node: () => {
        const summary = summaries?.[id];
        return summary ? stablecoinCard(asOf, summary, pegById.get(id) ?? null, gradeById.get(id) ?? null) : null;
      },
    });
  }
  jobs.push({
    name: "safety-scores",
    path: ogPath("safety-scores"),
    missing: "no safety grades, summary or stablecoin list",
    node: () =>
      grades && summaries && list
        ? safetyScoresCard(asOf, grades, summaries, new Set(list.peggedAssets.map((c) => c.id)))
        : null,
  });
  jobs.push({
    name: "depeg",
    path: ogPath("depeg"),
    missing: "no depeg ledger",
    node: () => (depeg ? depegCard(asOf, depeg) : null),
  });
  jobs.push({
    name: "stability-index",
    path: ogPath("stability-index"),
    missing: "no current stability index reading",
    node: () => (stability?.current ? stabilityIndexCard(asOf, { ...stability, current: stability.current }) : null),
  });
  return jobs;
}

/**
 * Renders every OG image of a build ({@link ogJobs}) from its published site-data payloads (`files`: path → body of
 * the files emitted so far, JSON text, possibly spooled). Per coin: one image for each of the OG_STABLECOIN_LIMIT
 * largest coins (current circulating supply, USD) that have a stablecoin detail file and a summary entry. Index images: safety scores (needs safety-grades and summary),
 * depeg (needs the depeg ledger), stability index (needs a current reading). An image whose inputs are
 * missing or fail their schema is not rendered (listed in `skipped`; its route answers 503); nothing
 * is invented. Deterministic: same payloads and as-of → same bytes.
 *
 * With `cache` (build/og/cache.ts), an image whose node tree was drawn before by the same renderer is
 * read back from it instead; only the others go to the render worker (none started when every image is
 * cached), and each one drawn without refused URLs is stored (an image with refused glyphs is drawn
 * again each time, so its warning is not lost). Idle entries are pruned afterwards. Throws the worker's
 * render error, or a cache read/write error other than a missing entry.
 */
export async function renderOgImages(
  files: ReadonlyMap<string, Body>,
  asOf: number,
  cache: OgImageCache | null = null,
): Promise<OgRenderResult> {
  const jobs = ogJobs(files, asOf);
  const started = performance.now();
  const out: OgRenderResult = { images: [], skipped: [], refused: [], rendered: 0, cached: 0, renderMs: 0 };
  let renderer: OgRenderer | null = null;
  try {
    const pending: Promise<void>[] = [];
    for (const job of jobs) {
      const node = job.node();
      if (!node) {
        out.skipped.push(`${job.path}: ${job.missing}`);
        continue;
      }
      const key = cache ? cache.keyOf(node) : null;
      const hit = cache && key ? cache.get(key) : null;
      const image: OgImage = { path: job.path, name: job.name, png: hit ?? new Uint8Array() };
      out.images.push(image);
      if (hit) {
        out.cached++;
        continue;
      }
      renderer ??= new OgRenderer();
      pending.push(
        renderer.render(node).then(async ({ png, refused }) => {
          image.png = png;
          out.rendered++;
          for (const u of refused) if (!out.refused.includes(u)) out.refused.push(u);
          if (cache && key && refused.length === 0) await cache.put(key, png);
        }),
      );
    }
    await Promise.all(pending);
  } finally {
    await renderer?.close();
  }
  cache?.prune();
  out.refused.sort();
  out.renderMs = Math.round(performance.now() - started);
  return out;
}

/** tsx's loader API, resolved from this module (so the worker finds it whatever its cwd). */
const TSX_API = import.meta.resolve("tsx/esm/api");

/**
 * renderPng (build/og/render.ts) on a worker thread of its own (build/og/render-worker.ts, loaded
 * through tsx's loader), so rendering the images (about 130 ms of CPU each) runs beside the build's other work
 * on a second core. Requests are answered in order; `render` rejects with the worker's error, or when
 * the worker exits. `close` ends the worker.
 */
class OgRenderer {
  // The entry is TypeScript: the worker registers tsx's loader first (a worker does not inherit the
  // parent's loader hooks, and vitest's transform does not reach it).
  private readonly worker = new Worker(
    `import(${JSON.stringify(TSX_API)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL("./render-worker.ts", import.meta.url).href)}); });`,
    { eval: true },
  );
  private readonly waiting = new Map<
    number,
    { resolve: (r: { png: Uint8Array; refused: string[] }) => void; reject: (e: Error) => void }
  >();
  private next = 0;

  constructor() {
    this.worker.on("message", (m: { id: number; png?: Uint8Array; refused?: string[]; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (!w) return;
      if (m.error !== undefined || !m.png) w.reject(new Error(`OG render failed: ${m.error}`));
      else w.resolve({ png: m.png, refused: m.refused ?? [] });
    });
    const failAll = (e: Error) => {
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    this.worker.on("error", failAll);
    this.worker.on("exit", (code) => failAll(new Error(`OG render worker exited (code ${code})`)));
  }

  /** Renders `node` on the worker: its PNG bytes and the refused URLs. */
  render(node: OgNode): Promise<{ png: Uint8Array; refused: string[] }> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, node });
    });
  }

  /** Ends the worker (pending renders reject). */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
