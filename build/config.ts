import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { BLUECHIP_BASE_URL } from "../pipelines/sources/bluechip/bluechip.ts";

/** Repository root (the directory holding package.json). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const BuildConfigSchema = z
  .object({
    /** Directory of recorded real inputs (default `../shared/data` beside the checkout). */
    BALLAST_CAPTURE_DIR: z.string().default(resolve(REPO_ROOT, "../shared/data")),
    /** Storage root for the fs sink: raw/, builds/, datasets/, latest.json. */
    BALLAST_DATA_DIR: z.string().default(resolve(REPO_ROOT, "data")),
    /** Persistent warehouse (history tables survive across builds). */
    BALLAST_WAREHOUSE: z.string().optional(),
    /**
     * Parent folder of a build's scratch folder (DuckDB spill files, emitter intermediates such as the
     * researchers' DuckDB file), removed after each build, and of the parsed-capture cache
     * (`ballast-staged-captures`, build/staged-cache.ts) and the OG render cache (`ballast-og-images`,
     * build/og/cache.ts), which are kept; default `<BALLAST_DATA_DIR>/scratch`,
     * so every checkout (and data dir) has its own cache, not one shared through the OS temp dir.
     */
    BALLAST_SCRATCH_DIR: z.string().optional(),
    /** On-chain ledger the ingestion jobs write and the build reads (default `<BALLAST_DATA_DIR>/onchain.duckdb`). */
    BALLAST_ONCHAIN_LEDGER: z.string().optional(),
    /**
     * Newest complete builds (by as-of) kept after each publish; the serving build and the newest build
     * of each as-of day within the dataset retention window are kept too, every other build is deleted.
     */
    BALLAST_KEEP_BUILDS: z.coerce.number().int().min(1).default(5),
    STORAGE_DRIVER: z.enum(["fs", "s3"]).default("fs"),
    S3_ENDPOINT: z.string().url().optional(),
    S3_BUCKET: z.string().optional(),
    S3_REGION: z.string().default("us-east-1"),
    S3_ACCESS_KEY_ID: z.string().optional(),
    S3_SECRET_ACCESS_KEY: z.string().optional(),
    /** CoinGecko demo key for live captures (optional; keyless works with lower limits). */
    COINGECKO_API_KEY: z.string().optional(),
    /** Base URL of the Bluechip ratings backend for live captures (`<url>coin-data/{slug}`; default the public backend). */
    BALLAST_BLUECHIP_URL: z.string().url().default(BLUECHIP_BASE_URL),
    /** Bluechip slugs the live capture asks for, comma-separated (default: BLUECHIP_SLUGS in pipelines/sources/bluechip/bluechip.ts). */
    BALLAST_BLUECHIP_SLUGS: z.string().optional(),
    /** Upstream base URL overrides for live capture, `source=url` comma-separated (e.g. a mirror or the test replay servers). */
    BALLAST_UPSTREAM_URLS: z.string().optional(),
    /** Jobs `schedule` runs, comma-separated (default every job: prices-peg, freezes, markets, daily). */
    BALLAST_SCHEDULE_JOBS: z.string().optional(),
    /** Run log retention of `schedule`: newest per-run objects kept under scheduler/runs/ … */
    BALLAST_SCHEDULE_KEEP_RUNS: z.coerce.number().int().min(1).default(1000),
    /** … and their maximum age in days (whichever prunes more). */
    BALLAST_SCHEDULE_KEEP_DAYS: z.coerce.number().min(0).default(14),
    /** Seconds `schedule` waits on SIGTERM/SIGINT for the running job before recording it aborted and exiting. */
    BALLAST_SCHEDULE_GRACE_SEC: z.coerce.number().min(0).default(120),
    /**
     * V8 heap growth of build processes (`build`, `schedule`; lib/heap-growth.ts), in percent past the
     * live size of the last full collection; 0 keeps V8's own factor (up to 300%). A build allocates in
     * bursts (each analytic reads its inputs into rows and drops them). Measured at 10× the recorded history:
     * peak RSS 2,087 MB at V8's factor and 1,277 MB at 50 (cold, same wall time); 20 gave ~1,200 MB at +5 s of ~45 s.
     */
    BALLAST_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(50),
    /** Donations ledger file (default pipelines/registry/donations.json, no receipts); read by the load stage (pipelines/registry/donations.ts). */
    BALLAST_DONATIONS_LEDGER: z.string().optional(),
  })
  .superRefine((c, ctx) => {
    if (c.STORAGE_DRIVER === "s3") {
      for (const k of ["S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"] as const) {
        if (!c[k]) ctx.addIssue({ code: "custom", path: [k], message: `${k} is required when STORAGE_DRIVER=s3` });
      }
    }
  })
  .transform((c) => ({ ...c, BALLAST_SCRATCH_DIR: c.BALLAST_SCRATCH_DIR ?? join(c.BALLAST_DATA_DIR, "scratch") }));
export type BuildConfig = z.infer<typeof BuildConfigSchema>;

/** Parses the build config from env; prints every problem and exits 1 when invalid. */
export function loadBuildConfig(env: NodeJS.ProcessEnv = process.env): BuildConfig {
  const res = BuildConfigSchema.safeParse(env);
  if (!res.success) {
    process.stderr.write(`Invalid build configuration:\n${z.prettifyError(res.error)}\n`);
    process.exit(1);
  }
  return res.data;
}
