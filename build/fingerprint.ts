import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./config.ts";

/**
 * What a build depends on, as one sha256, so `make run` can skip a build whose inputs and code did
 * not change (`build --if-changed`): the content of the code and curated data (build/, pipelines/,
 * site-data/, datasets/, package-lock.json), the donations ledger in use, each capture file's path,
 * size and modification time (recorded captures and live `raw/` captures: stat only, no reading of
 * gigabytes), the on-chain ledger's size and time, the as-of, and the build settings from the
 * environment. Anything else that differs (a new dependency version, a changed capture) makes a new
 * fingerprint and a build; an equal one means the build would be the same.
 */
export interface BuildInputs {
  asOf: number;
  captureDir: string;
  dataDir: string;
  onchainLedgerPath: string;
}

const CODE_DIRS = ["build", "pipelines", "site-data", "datasets"];
const SETTINGS = [
  "BALLAST_DONATIONS_LEDGER",
  "BALLAST_KEEP_BUILDS",
  "BALLAST_WAREHOUSE",
  "STORAGE_DRIVER",
  "S3_ENDPOINT",
  "S3_BUCKET",
];

/** Files under `dir` (recursively, sorted), skipping `node_modules` and dot-entries. */
function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** codeFingerprint's value, computed once per process. */
let code: string | null = null;

/**
 * sha256 (hex) of the code and curated data a build runs (build/, pipelines/, site-data/, datasets/ and
 * package-lock.json: path and content of every file), computed once per process.
 */
export function codeFingerprint(): string {
  if (code) return code;
  const h = createHash("sha256");
  for (const f of [...CODE_DIRS.flatMap((d) => walk(join(REPO_ROOT, d))), join(REPO_ROOT, "package-lock.json")]) {
    h.update(`${relative(REPO_ROOT, f)} ${createHash("sha256").update(readFileSync(f)).digest("hex")}\n`);
  }
  code = h.digest("hex");
  return code;
}

/** The fingerprint (hex sha256) of a build with `inputs` on this checkout. Reads code files; stats captures. */
export function buildFingerprint(inputs: BuildInputs): string {
  const h = createHash("sha256");
  const line = (s: string) => h.update(`${s}\n`);
  line(`as-of ${inputs.asOf}`);
  for (const k of SETTINGS) line(`env ${k}=${process.env[k] ?? ""}`);
  line(`code ${codeFingerprint()}`);
  const ledger = process.env.BALLAST_DONATIONS_LEDGER;
  if (ledger && existsSync(ledger))
    line(`donations ${createHash("sha256").update(readFileSync(ledger)).digest("hex")}`);
  const stat = (label: string, root: string, f: string) => {
    const s = statSync(f);
    line(`${label} ${relative(root, f)} ${s.size} ${Math.floor(s.mtimeMs)}`);
  };
  for (const f of walk(inputs.captureDir)) stat("capture", inputs.captureDir, f);
  for (const f of walk(join(inputs.dataDir, "raw"))) stat("raw", inputs.dataDir, f);
  // recorded depeg-history verdicts (build/depeg-verdicts.ts): a new version is a new input
  for (const f of walk(join(inputs.dataDir, "verdicts"))) stat("verdicts", inputs.dataDir, f);
  if (existsSync(inputs.onchainLedgerPath)) stat("ledger", inputs.dataDir, inputs.onchainLedgerPath);
  return h.digest("hex");
}

/** Where the fingerprint of the build in force is kept (fs storage only: `make run`). */
const recordPath = (dataDir: string) => join(dataDir, ".build-inputs.json");

/**
 * The build id published with `fingerprint`, when that build still serves (`latest.json` points at
 * it and its manifest exists); null otherwise (never built, inputs changed, or another build serves).
 */
export function unchangedBuild(dataDir: string, fingerprint: string): string | null {
  try {
    const rec = JSON.parse(readFileSync(recordPath(dataDir), "utf8")) as { fingerprint?: string; buildId?: string };
    const pointer = JSON.parse(readFileSync(join(dataDir, "latest.json"), "utf8")) as {
      buildId?: string;
      manifest?: string;
    };
    if (rec.fingerprint !== fingerprint || !rec.buildId || pointer.buildId !== rec.buildId || !pointer.manifest)
      return null;
    return existsSync(join(dataDir, pointer.manifest)) ? rec.buildId : null;
  } catch {
    return null;
  }
}

/** Records that `buildId` was published from inputs with `fingerprint`. */
export function recordBuildInputs(dataDir: string, fingerprint: string, buildId: string): void {
  writeFileSync(recordPath(dataDir), `${JSON.stringify({ fingerprint, buildId })}\n`);
}
