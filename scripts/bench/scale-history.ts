/**
 * SYNTHETIC capture directory for the scale check (issue 21 item 8): the recorded captures with every
 * time-series archive the build reads made `factor` times as long, by replaying the recorded series
 * shifted back in time. The history still ends where the recording ends, so a build as of the
 * recorded as-of (2025-09-07) sees `factor` × the rows. The result is NOT data: it is written to a
 * temp directory (never under ../shared or the repo's data dir), marked by SYNTHETIC-NOT-DATA.md, and
 * the caller deletes it after the bench.
 *
 * Per file, with span D = whole UTC days from its first to its last row + 1, copy k (1 … factor−1)
 * is the file's rows with every time shifted back by k × D days (so copies never overlap each other
 * or the original), written in the file's own format and row order (ascending files get the copies
 * before the original rows, descending ones after). Other columns are unchanged, except:
 * - event logs (USDT, USDP, PYUSD) and BNB `totalSupply()` samples: block numbers of the copies are
 *   mapped linearly by time into [1, first recorded block − 1] (block order follows time order, no
 *   collision with recorded blocks); transaction and block hashes of copy k get their first two hex
 *   digits replaced by `5k` (unique per copy, same tx → same hash, so log grouping is kept). The one
 *   PYUSD row without a timestamp stays in the original only.
 * - 1-minute Binance klines: 10 daily files; each file gets the copies of its own rows shifted by
 *   k × D where D is the span of all 10 files (10 days), so the 10 files together hold 10 × 10 days.
 * Every other capture (snapshots: DefiLlama list, CoinGecko markets, yields sample, registry, …) is
 * a symlink to the recorded file, read-only by construction (nothing is ever written through a link).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const DAY = 86_400;

/** How one archive's rows carry time. `col` indexes are 0-based CSV columns. */
type Spec =
  | { kind: "dated-csv"; file: string; dateCol: number } // `YYYY-MM-DD…` labels (any suffix kept)
  | {
      kind: "block-csv";
      file: string;
      timeCol: number;
      timeFormat: "iso" | "unix-s";
      blockCol: number;
      hashCols: number[];
    }
  | { kind: "klines"; files: string[] }
  | { kind: "range-bars-json"; file: string };

const CHECK_SKED = "check-sked-crypto-data-resources";
const BHEMEN = "bhemen-crypto-insights";

/** The time-series archives RECORDED_CAPTURES reads (pipelines/sources/recorded-captures.ts). */
export const SCALED_ARCHIVES: Spec[] = [
  ...[
    "total_stablecoins_all_chains.csv",
    "Ethereum_USD_stablecoin_supply.csv",
    "stablecoin_prices.csv",
    "stablecoin_USDC_circulating_by_chain.csv",
  ].map((f): Spec => ({ kind: "dated-csv", file: `${CHECK_SKED}/${f}`, dateCol: 0 })),
  ...["usdt_history.csv", "usdc_history.csv"].map(
    (f): Spec => ({ kind: "dated-csv", file: `${BHEMEN}/coingecko-usdc-usdt/${f}`, dateCol: 0 }),
  ),
  { kind: "dated-csv", file: "partrita-stablecoin-tracker/stablecoin_marketcap.csv", dateCol: 0 },
  ...["USDT", "USDC", "DAI", "USDe", "USDS"].map(
    (f): Spec => ({ kind: "dated-csv", file: `${BHEMEN}/stablecoin_prices/${f}.csv`, dateCol: 0 }),
  ),
  { kind: "dated-csv", file: "ecb-eurofxref/eurofxref-hist.csv", dateCol: 0 },
  ...["BSC-USD", "BUSD", "FDUSD", "USDC"].map(
    (f): Spec => ({
      kind: "block-csv",
      file: `${BHEMEN}/bnb-supply/${f}.csv`,
      timeCol: 4,
      timeFormat: "iso",
      blockCol: 2,
      hashCols: [],
    }),
  ),
  {
    kind: "block-csv",
    file: "bhemen-usdt/usdt_configs.csv",
    timeCol: 4,
    timeFormat: "iso",
    blockCol: 1,
    hashCols: [2],
  },
  {
    kind: "block-csv",
    file: "bhemen-paxos-coins/usdp_configs.csv",
    timeCol: 4,
    timeFormat: "iso",
    blockCol: 1,
    hashCols: [2],
  },
  {
    kind: "block-csv",
    file: `${BHEMEN}/pyusd/pyusd_supply_events.csv`,
    timeCol: 6,
    timeFormat: "unix-s",
    blockCol: 2,
    hashCols: [1, 8],
  },
  {
    kind: "klines",
    files: Array.from(
      { length: 10 },
      (_, i) => `binance-vision-usdc-svb-2023/USDCUSDT-1m-2023-03-${String(11 + i).padStart(2, "0")}.csv`,
    ),
  },
  { kind: "range-bars-json", file: "bertrandbuild-stablesafe/data_usdc_large_depeg_2023.json" },
];

/** One scaled file: rows before and after, span and shift unit in days. */
export interface ScaledFile {
  file: string;
  rowsIn: number;
  rowsOut: number;
  spanDays: number;
  from: string;
  to: string;
}

export interface SyntheticCaptureDir {
  dir: string;
  factor: number;
  files: ScaledFile[];
  linked: number;
}

/** Unix seconds of a `YYYY-MM-DD…` label's day (00:00 UTC). */
const dayOf = (label: string) => Date.parse(`${label.slice(0, 10)}T00:00:00Z`) / 1000;
/** `YYYY-MM-DD` of Unix seconds (years < 1000 are not expected: the longest archive goes back ~240 years). */
const isoDay = (sec: number) => new Date(sec * 1000).toISOString().slice(0, 10);
/** The label with its leading date moved back `days` days; the rest (time, zone text) kept. */
const shiftLabel = (label: string, days: number) => isoDay(dayOf(label) - days * DAY) + label.slice(10);

/** Lines of a text file without the final empty line; `eol` is the file's line ending. */
function splitLines(text: string): { lines: string[]; eol: string } {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text.split(eol);
  if (lines.at(-1) === "") lines.pop();
  return { lines, eol };
}

/** `rows` followed or preceded by copies 1 … factor−1 (copy k from `copy(row, k)`), in the file's time order. */
function withCopies<T>(rows: T[], factor: number, ascending: boolean, copy: (k: number) => T[]): T[] {
  const copies = Array.from({ length: factor - 1 }, (_, i) => i + 1); // k = 1 … factor−1, newest copy first
  return ascending ? [...copies.reverse().flatMap(copy), ...rows] : [...rows, ...copies.flatMap(copy)];
}

const spanDays = (secs: number[]) => Math.floor((Math.max(...secs) - Math.min(...secs)) / DAY) + 1;
const rangeOf = (secs: number[], days: number, factor: number) => ({
  from: isoDay(Math.min(...secs) - (factor - 1) * days * DAY),
  to: isoDay(Math.max(...secs)),
});

function scaleDatedCsv(
  text: string,
  spec: Extract<Spec, { kind: "dated-csv" }>,
  factor: number,
): { text: string; stat: Omit<ScaledFile, "file"> } {
  const { lines, eol } = splitLines(text);
  const [header, ...rows] = lines;
  const cells = rows.map((r) => r.split(","));
  const secs = cells.map((c) => dayOf(c[spec.dateCol]));
  if (secs.some((s) => !Number.isFinite(s)))
    throw new Error(`${spec.file}: a row without a YYYY-MM-DD label in column ${spec.dateCol}`);
  const d = spanDays(secs);
  const out = withCopies(rows, factor, secs[0] <= secs[secs.length - 1], (k) =>
    cells.map((c) => c.map((v, i) => (i === spec.dateCol ? shiftLabel(v, k * d) : v)).join(",")),
  );
  return {
    text: [header, ...out].join(eol) + eol,
    stat: { rowsIn: rows.length, rowsOut: out.length, spanDays: d, ...rangeOf(secs, d, factor) },
  };
}

function scaleBlockCsv(
  text: string,
  spec: Extract<Spec, { kind: "block-csv" }>,
  factor: number,
): { text: string; stat: Omit<ScaledFile, "file"> } {
  const { lines, eol } = splitLines(text);
  const [header, ...rows] = lines;
  const cells = rows.map((r) => r.split(","));
  const timeOf = (c: string[]) => {
    const v = c[spec.timeCol];
    if (!v) return Number.NaN;
    return spec.timeFormat === "unix-s" ? Number(v) : Date.parse(`${v.replace(" ", "T")}Z`) / 1000;
  };
  const times = cells.map(timeOf);
  const timed = times.filter(Number.isFinite);
  const d = spanDays(timed);
  const firstBlock = Math.min(...cells.map((c) => Number(c[spec.blockCol])));
  const tMin = Math.min(...timed) - (factor - 1) * d * DAY,
    tMax = Math.max(...timed) - d * DAY;
  const blockAt = (t: number) => 1 + Math.floor(((t - tMin) / Math.max(1, tMax - tMin)) * (firstBlock - 2));
  const fmtTime = (orig: string, t: number) =>
    spec.timeFormat === "unix-s"
      ? String(t)
      : new Date(t * 1000)
          .toISOString()
          .slice(0, 19)
          .replace("T", orig.includes("T") ? "T" : " ");
  const copy = (k: number) =>
    cells.flatMap((c, i) => {
      if (!Number.isFinite(times[i])) return [];
      const t = times[i] - k * d * DAY;
      return [
        c
          .map((v, j) => {
            if (j === spec.timeCol) return fmtTime(v, t);
            if (j === spec.blockCol) return String(blockAt(t));
            if (spec.hashCols.includes(j) && v) {
              const p = v.startsWith("0x") ? 2 : 0;
              return `${v.slice(0, p)}5${k}${v.slice(p + 2)}`;
            }
            return v;
          })
          .join(","),
      ];
    });
  const ascending = timed[0] <= timed[timed.length - 1];
  const out = withCopies(rows, factor, ascending, copy);
  return {
    text: [header, ...out].join(eol) + eol,
    stat: { rowsIn: rows.length, rowsOut: out.length, spanDays: d, ...rangeOf(timed, d, factor) },
  };
}

/**
 * Writes the synthetic capture directory into a fresh temp dir and returns it (the caller removes it).
 * `srcDir` is read only: unchanged files are symlinked, scaled files are new files in the temp dir.
 */
export function makeSyntheticCaptureDir(srcDir: string, factor: number): SyntheticCaptureDir {
  if (!Number.isInteger(factor) || factor < 2 || factor > 10)
    throw new Error(`factor ${factor}: 2 … 10 (hash prefixes 5k stay one hex digit)`);
  const dir = mkdtempSync(join(tmpdir(), `ballast-SYNTHETIC-${factor}x-`));
  const outputs = new Map<string, string>();
  const files: ScaledFile[] = [];
  const read = (f: string) => readFileSync(join(srcDir, f), "utf8");
  for (const spec of SCALED_ARCHIVES) {
    if (spec.kind === "dated-csv" || spec.kind === "block-csv") {
      const r =
        spec.kind === "dated-csv"
          ? scaleDatedCsv(read(spec.file), spec, factor)
          : scaleBlockCsv(read(spec.file), spec, factor);
      outputs.set(spec.file, r.text);
      files.push({ file: spec.file, ...r.stat });
    } else if (spec.kind === "klines") {
      const texts = spec.files.map(read);
      const all = texts.flatMap((t) => splitLines(t).lines.map((l) => Number(l.split(",")[0]) / 1000));
      const d = spanDays(all);
      let rowsIn = 0,
        rowsOut = 0;
      spec.files.forEach((f, i) => {
        const { lines, eol } = splitLines(texts[i]);
        const cells = lines.map((l) => l.split(","));
        const out = withCopies(lines, factor, true, (k) =>
          cells.map((c) =>
            c.map((v, j) => (j === 0 || j === 6 ? String(Number(v) - k * d * DAY * 1000) : v)).join(","),
          ),
        );
        outputs.set(f, out.join(eol) + eol);
        rowsIn += lines.length;
        rowsOut += out.length;
      });
      files.push({
        file: `${dirname(spec.files[0])}/USDCUSDT-1m-*.csv (${spec.files.length} files)`,
        rowsIn,
        rowsOut,
        spanDays: d,
        ...rangeOf(all, d, factor),
      });
    } else {
      const doc = JSON.parse(read(spec.file)) as { meta: unknown; data: { dt: string }[] };
      const secs = doc.data.map((b) => Date.parse(b.dt) / 1000);
      const d = spanDays(secs);
      const data = withCopies(doc.data, factor, true, (k) =>
        doc.data.map((b) => ({ ...b, dt: new Date(Date.parse(b.dt) - k * d * DAY * 1000).toISOString() })),
      );
      outputs.set(
        spec.file,
        `${JSON.stringify({ meta: { synthetic: `SYNTHETIC ${factor}× replay for the scale bench, not data` }, data }, null, 1)}\n`,
      );
      files.push({
        file: spec.file,
        rowsIn: doc.data.length,
        rowsOut: data.length,
        spanDays: d,
        ...rangeOf(secs, d, factor),
      });
    }
  }
  // Mirror the tree: scaled files written, every other file a symlink to the recorded one.
  let linked = 0;
  const walk = (rel: string) => {
    for (const name of readdirSync(join(srcDir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(join(srcDir, r)).isDirectory()) {
        mkdirSync(join(dir, r), { recursive: true });
        walk(r);
        continue;
      }
      const scaled = outputs.get(r);
      if (scaled !== undefined)
        writeFileSync(join(dir, r), scaled, { flag: "wx" }); // wx: never through an existing path
      else {
        symlinkSync(join(srcDir, r), join(dir, r));
        linked++;
      }
    }
  };
  walk("");
  const missing = [...outputs.keys()].filter((f) => !isFile(join(dir, f)));
  if (missing.length) throw new Error(`scaled archives not in ${srcDir}: ${missing.join(", ")}`);
  writeFileSync(
    join(dir, "SYNTHETIC-NOT-DATA.md"),
    `# SYNTHETIC — not data, never publish

Written by scripts/bench/scale.ts (scripts/bench/scale-history.ts) for the ${factor}× scale check of \`make bench\`
(issue 21 item 8) from ${srcDir}. The time-series archives below are the recorded series replayed
${factor - 1} more times, each copy shifted back in time by k × (the file's span); snapshots are symlinks
to the recorded files. This directory is deleted when the bench ends.

| file | recorded rows | rows here | shift unit (days) | range here |
|---|---|---|---|---|
${files.map((f) => `| ${f.file} | ${f.rowsIn} | ${f.rowsOut} | ${f.spanDays} | ${f.from} → ${f.to} |`).join("\n")}
`,
  );
  return { dir, factor, files, linked };
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
