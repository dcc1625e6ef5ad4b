import type { z } from "zod";
import type { DepegLedgerSchema } from "../../site-data/depeg-events.ts";
import type { PegSummaryPayloadSchema } from "../../site-data/peg-summary.ts";
import type { SafetyGradesPayloadSchema } from "../../site-data/report-cards.ts";
import type { StabilityIndexFileSchema } from "../../site-data/stability-index.ts";
import type { StablecoinSummary } from "../../site-data/stablecoin-summary.ts";
import { h, type OgChild, type OgNode, type Style, svg } from "./render.ts";

type PegSummary = z.infer<typeof PegSummaryPayloadSchema>;
type PegCoin = PegSummary["coins"][number];
type SafetyGrades = z.infer<typeof SafetyGradesPayloadSchema>;
type SafetyGrade = SafetyGrades["grades"][number];
type DepegLedger = z.infer<typeof DepegLedgerSchema>;
type StabilityIndex = z.infer<typeof StabilityIndexFileSchema>;

// ---------------------------------------------------------------- look

const C = {
  bg: "#0b1220",
  panel: "#131c2e",
  line: "#23304a",
  text: "#f1f5f9",
  muted: "#94a3b8",
  faint: "#64748b",
  accent: "#2dd4bf",
  green: "#22c55e",
  lime: "#84cc16",
  yellow: "#eab308",
  orange: "#f97316",
  red: "#ef4444",
  darkRed: "#b91c1c",
};

/** Colour of a letter grade (A… green → F red, NR grey). */
export function gradeColour(grade: string): string {
  return ({ A: C.green, B: C.lime, C: C.yellow, D: C.orange, F: C.red } as Record<string, string>)[grade[0]] ?? C.faint;
}

/** Colour of a stability-index band. */
export function bandColour(band: string): string {
  return (
    (
      {
        BEDROCK: C.green,
        STEADY: C.lime,
        TREMOR: C.yellow,
        FRACTURE: C.orange,
        CRISIS: C.red,
        MELTDOWN: C.darkRed,
      } as Record<string, string>
    )[band] ?? C.faint
  );
}

// ---------------------------------------------------------------- numbers

/** USD amount in compact form: `$168.83B`, `$53.2M`, `$912`; null → `n/a`. */
export function usdCompact(v: number | null): string {
  if (v === null) return "n/a";
  const a = Math.abs(v);
  const sign = v < 0 ? "-" : "";
  for (const [div, unit] of [
    [1e12, "T"],
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "K"],
  ] as const) {
    if (a >= div) return `${sign}$${(a / div).toFixed(a / div >= 100 ? 1 : 2)}${unit}`;
  }
  return `${sign}$${a.toFixed(0)}`;
}

/** Price in USD with 4 decimals (`$0.9999`); null → `n/a`. */
export const usdPrice = (v: number | null) => (v === null ? "n/a" : `$${v.toFixed(4)}`);

/** Signed basis points (`+12 bps`, `-369 bps`, `0 bps`); null → `n/a`. */
export const bps = (v: number | null) => (v === null ? "n/a" : `${v > 0 ? "+" : ""}${v} bps`);

/** Signed percent with 2 decimals; null → null. */
const pct = (v: number | null) => (v === null || !Number.isFinite(v) ? null : `${v > 0 ? "+" : ""}${v.toFixed(2)}%`);

/** `YYYY-MM-DD` of Unix seconds (UTC). */
export const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

/** `as of YYYY-MM-DD HH:MM UTC` of Unix seconds. */
export const asOfLabel = (t: number) => `as of ${new Date(t * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;

// ---------------------------------------------------------------- parts

function brand(): OgNode {
  return h(
    "div",
    { alignItems: "center", gap: 14 },
    svg(
      "svg",
      { width: 44, height: 44, viewBox: "0 0 44 44" },
      svg("rect", { x: 0, y: 0, width: 44, height: 44, rx: 10, fill: C.accent }),
      svg("rect", { x: 20, y: 7, width: 4, height: 18, fill: C.bg }),
      svg("path", { d: "M8 26 H36 L30 35 H14 Z", fill: C.bg }),
    ),
    h("div", { fontSize: 32, color: C.text, letterSpacing: 1 }, "Ballast"),
  );
}

/** The frame shared by every card: brand and as-of on top, title, body, footer with the route. */
function frame(o: {
  asOf: number;
  kicker: string;
  title: OgChild[];
  subtitle?: string;
  body: OgNode;
  route: string;
}): OgNode {
  return h(
    "div",
    {
      width: "100%",
      height: "100%",
      flexDirection: "column",
      background: C.bg,
      color: C.text,
      padding: "44px 56px 36px",
      fontFamily: "Geist",
    },
    h(
      "div",
      { justifyContent: "space-between", alignItems: "center" },
      brand(),
      h("div", { fontSize: 24, color: C.muted }, asOfLabel(o.asOf)),
    ),
    h(
      "div",
      { flexDirection: "column", marginTop: 26 },
      h("div", { fontSize: 22, color: C.accent, letterSpacing: 3, textTransform: "uppercase" }, o.kicker),
      h("div", { alignItems: "center", gap: 20, marginTop: 6 }, ...o.title),
      o.subtitle ? h("div", { fontSize: 26, color: C.muted, marginTop: 8 }, o.subtitle) : null,
    ),
    h("div", { flexGrow: 1, marginTop: 26, marginBottom: 18 }, o.body),
    h(
      "div",
      {
        justifyContent: "space-between",
        fontSize: 20,
        color: C.faint,
        borderTop: `1px solid ${C.line}`,
        paddingTop: 14,
      },
      h("div", {}, "Ballast · stablecoin analytics"),
      h("div", {}, o.route),
    ),
  );
}

/** A card title: 64 px, 50 px past 22 characters, cut with `…` past 27 so the pills beside it stay on the card. */
const title = (text: string) =>
  h(
    "div",
    { fontSize: text.length > 22 ? 50 : 64, color: C.text, lineHeight: 1.05 },
    text.length > 27 ? `${text.slice(0, 26).trimEnd()}…` : text,
  );
const pill = (text: string, colour: string, size = 30) =>
  h(
    "div",
    { fontSize: size, color: colour, border: `2px solid ${colour}`, borderRadius: 12, padding: "4px 16px" },
    text,
  );

/** A stat tile: label, big value, optional note (coloured). */
function tile(
  label: string,
  value: string,
  note?: { text: string; colour?: string } | null,
  valueColour = C.text,
): OgNode {
  return h(
    "div",
    {
      flexDirection: "column",
      flex: 1,
      background: C.panel,
      borderRadius: 18,
      padding: "22px 24px",
      border: `1px solid ${C.line}`,
    },
    h("div", { fontSize: 18, color: C.muted, textTransform: "uppercase", letterSpacing: 2 }, label),
    h("div", { fontSize: 46, color: valueColour, marginTop: 12 }, value),
    note ? h("div", { fontSize: 20, color: note.colour ?? C.muted, marginTop: 8 }, note.text) : null,
  );
}

const row = (style: Style, ...children: OgChild[]) => h("div", { gap: 22, width: "100%", ...style }, ...children);

// ---------------------------------------------------------------- cards

/**
 * Share image of one stablecoin: name and symbol, circulating supply (USD) with its 7-day change,
 * price (USD), current peg deviation (bps) with the peg score, and the safety grade. Inputs are the
 * build's payloads: `summary` (site-data/stablecoin-summary.json entry), `peg` (peg-summary coin,
 * null when absent), `grade` (safety-grades row, null when absent); missing values show `n/a`.
 */
export function stablecoinCard(
  asOf: number,
  summary: StablecoinSummary,
  peg: PegCoin | null,
  grade: SafetyGrade | null,
): OgNode {
  const s = summary.supplyUsd;
  const change7d = s.current !== null && s.prevWeek ? pct(((s.current - s.prevWeek) / s.prevWeek) * 100) : null;
  const dev = peg?.currentDeviationBps ?? null;
  const devColour = dev === null ? C.text : Math.abs(dev) >= 100 ? C.red : Math.abs(dev) >= 50 ? C.orange : C.green;
  const status =
    peg === null
      ? null
      : peg.activeDepeg
        ? { text: "Active depeg incident", colour: C.red }
        : dev === null
          ? null
          : { text: "On peg", colour: C.green };
  const pegNote =
    peg?.pegScore !== null && peg?.pegScore !== undefined
      ? `peg score ${peg.pegScore}/100`
      : peg?.pegScoreUnavailableReason
        ? `peg score n/a (${peg.pegScoreUnavailableReason})`
        : null;
  const subtitle = [summary.pegMechanism, peg ? `pegged to ${peg.pegCurrency}` : null].filter(Boolean).join(" · ");
  return frame({
    asOf,
    kicker: "Stablecoin",
    route: `/api/og/stablecoin/${summary.id}`,
    subtitle,
    title: [title(summary.name), pill(summary.symbol, C.accent), status ? pill(status.text, status.colour, 24) : null],
    body: row(
      { alignItems: "stretch" },
      tile(
        "Circulating supply",
        usdCompact(s.current),
        change7d ? { text: `${change7d} in 7 days`, colour: change7d.startsWith("-") ? C.red : C.green } : null,
      ),
      tile("Price", usdPrice(summary.priceUsd), {
        text: summary.priceUsd === null ? "no current price" : `source: ${summary.priceSource}`,
      }),
      tile("Peg deviation", bps(dev), pegNote ? { text: pegNote } : null, devColour),
      tile(
        "Safety grade",
        grade?.grade ?? "n/a",
        grade ? { text: grade.score === null ? "not scored" : `score ${grade.score}/100` } : null,
        grade ? gradeColour(grade.grade) : C.text,
      ),
    ),
  });
}

const GRADE_ORDER = ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "NR"] as const;

/**
 * Share image of the safety scores: how many of the listed coins are graded, the count per grade as bars,
 * and the grades of the five largest coins by circulating supply (USD, from `summaries`). Only coins of
 * `listed` (the ids of site-data/stablecoins.json, what `/api/stablecoins` serves) count: grades of
 * unlisted coins (e.g. dead ones of the cemetery, graded F) are left out, and a listed coin without a grade
 * counts as NR, so the title's total is the list's count. Inputs: site-data/safety-grades.json,
 * site-data/stablecoin-summary.json, site-data/stablecoins.json.
 */
export function safetyScoresCard(
  asOf: number,
  grades: SafetyGrades,
  summaries: Record<string, StablecoinSummary>,
  listed: ReadonlySet<string>,
): OgNode {
  const ofListed = grades.grades.filter((g) => listed.has(g.id));
  const counts = new Map<string, number>(GRADE_ORDER.map((g) => [g, 0]));
  for (const g of ofListed) counts.set(g.grade, (counts.get(g.grade) ?? 0) + 1);
  counts.set("NR", (counts.get("NR") ?? 0) + listed.size - ofListed.length);
  const max = Math.max(1, ...counts.values());
  const graded = listed.size - (counts.get("NR") ?? 0);
  const largest = ofListed
    .flatMap((g) => {
      const supply = summaries[g.id]?.supplyUsd.current;
      return supply != null ? [{ g, supply }] : [];
    })
    .sort((a, b) => b.supply - a.supply || a.g.id.localeCompare(b.g.id))
    .slice(0, 5)
    .map(({ g }) => g);
  const held = grades.publication.status === "held";
  const bars = h(
    "div",
    {
      flexDirection: "column",
      flex: 1.25,
      background: C.panel,
      borderRadius: 18,
      padding: "20px 26px",
      border: `1px solid ${C.line}`,
    },
    h("div", { fontSize: 20, color: C.muted, textTransform: "uppercase", letterSpacing: 2 }, "Coins per grade"),
    h(
      "div",
      { alignItems: "flex-end", gap: 10, flexGrow: 1, marginTop: 12 },
      ...GRADE_ORDER.map((g) =>
        h(
          "div",
          { flexDirection: "column", alignItems: "center", flex: 1, height: "100%", justifyContent: "flex-end" },
          h("div", { fontSize: 18, color: C.muted }, String(counts.get(g))),
          h("div", {
            width: "100%",
            height: Math.max(3, Math.round(((counts.get(g) ?? 0) / max) * 110)),
            background: gradeColour(g),
            borderRadius: 4,
            marginTop: 4,
          }),
          h("div", { fontSize: 20, color: C.text, marginTop: 6 }, g),
        ),
      ),
    ),
  );
  const list = h(
    "div",
    {
      flexDirection: "column",
      flex: 1,
      background: C.panel,
      borderRadius: 18,
      padding: "20px 26px",
      border: `1px solid ${C.line}`,
    },
    h("div", { fontSize: 20, color: C.muted, textTransform: "uppercase", letterSpacing: 2 }, "Largest coins"),
    ...largest.map((g) =>
      h(
        "div",
        { justifyContent: "space-between", alignItems: "center", marginTop: 6 },
        h("div", { fontSize: 28, color: C.text }, g.symbol),
        h(
          "div",
          { alignItems: "center", gap: 16 },
          h("div", { fontSize: 22, color: C.muted }, usdCompact(summaries[g.id].supplyUsd.current)),
          h("div", { fontSize: 28, color: gradeColour(g.grade), width: 56, justifyContent: "flex-end" }, g.grade),
        ),
      ),
    ),
  );
  return frame({
    asOf,
    kicker: "Safety scores",
    route: "/api/og/safety-scores",
    title: [title(`${graded} of ${listed.size} coins graded`), held ? pill("publication held", C.orange, 24) : null],
    subtitle: `Letter grades A+ to F from a 0-100 safety score; NR = not rated · ${grades.methodology.version}`,
    body: row({ alignItems: "stretch" }, bars, list),
  });
}

/**
 * Share image of depeg monitoring: incidents open at as-of, incidents opened in the last 30 days,
 * pending (unconfirmed) incidents, and the four newest incidents (symbol, direction, peak deviation
 * in bps, start day, open or recovered). Input: site-data/depeg-events.json (newest first).
 */
export function depegCard(asOf: number, ledger: DepegLedger): OgNode {
  const open = ledger.events.filter((e) => e.endedAt === null).length;
  const recent = ledger.events.filter((e) => e.startedAt > asOf - 30 * 86400).length;
  const latest = ledger.events.slice(0, 4);
  return frame({
    asOf,
    kicker: "Depeg monitor",
    route: "/api/og/depeg",
    title: [title(open === 1 ? "1 depeg incident open" : `${open} depeg incidents open`)],
    subtitle: `${ledger.events.length} incidents recorded · deviation from each coin's peg reference`,
    body: row(
      { alignItems: "stretch" },
      h(
        "div",
        { flexDirection: "column", gap: 18, width: 330 },
        tile("Opened, last 30 days", String(recent)),
        tile("Pending confirmation", String(ledger.pending?.length ?? 0)),
      ),
      h(
        "div",
        {
          flexDirection: "column",
          flex: 1,
          background: C.panel,
          borderRadius: 18,
          padding: "20px 26px",
          border: `1px solid ${C.line}`,
        },
        h("div", { fontSize: 20, color: C.muted, textTransform: "uppercase", letterSpacing: 2 }, "Latest incidents"),
        ...latest.map((e) =>
          h(
            "div",
            { alignItems: "center", marginTop: 12, fontSize: 26 },
            h("div", { width: 150, color: C.text }, e.symbol),
            h(
              "div",
              { width: 170, color: Math.abs(e.peakDeviationBps) >= 100 ? C.red : C.orange },
              bps(e.peakDeviationBps),
            ),
            h("div", { width: 190, color: C.muted, fontSize: 22 }, `since ${day(e.startedAt)}`),
            h(
              "div",
              { flexGrow: 1, justifyContent: "flex-end", fontSize: 22, color: e.endedAt === null ? C.red : C.green },
              e.endedAt === null ? "OPEN" : "recovered",
            ),
          ),
        ),
        latest.length === 0 ? h("div", { fontSize: 26, color: C.muted, marginTop: 12 }, "No incidents recorded") : null,
      ),
    ),
  });
}

/**
 * Share image of the stability index: current score (0-100, one decimal) and band, 24 h average,
 * coins with an open incident weighing on it, the market cap it covers (USD), and the daily scores of
 * the last 365 days as a line. Input: site-data/stability-index.json with a non-null `current`.
 */
export function stabilityIndexCard(
  asOf: number,
  index: StabilityIndex & { current: NonNullable<StabilityIndex["current"]> },
): OgNode {
  const cur = index.current;
  const points = index.history.filter((r) => r.score !== null && r.date > asOf - 365 * 86400) as {
    date: number;
    score: number;
  }[];
  const W = 600,
    H = 170;
  // y axis: 100 at the top, down to the decade below the year's lowest score (at most 80), so a calm year is not a flat line at the top.
  const lo = Math.max(0, Math.min(80, Math.floor((Math.min(...points.map((p) => p.score)) - 1) / 10) * 10));
  const y = (v: number) => (H - ((v - lo) / (100 - lo)) * H).toFixed(1);
  let chart: OgNode = h("div", { fontSize: 22, color: C.muted }, "No daily readings in the last year");
  if (points.length >= 2) {
    const t0 = points[0].date,
      t1 = points[points.length - 1].date;
    const xy = points.map((p) => `${(((p.date - t0) / Math.max(1, t1 - t0)) * W).toFixed(1)},${y(p.score)}`);
    const grid = [0.25, 0.5, 0.75].map((f) => lo + f * (100 - lo));
    chart = h(
      "div",
      { flexDirection: "column" },
      h(
        "div",
        { justifyContent: "space-between", fontSize: 18, color: C.faint, marginBottom: 6 },
        h("div", {}, "Daily score, last 365 days"),
        h("div", {}, `axis ${lo}-100`),
      ),
      svg(
        "svg",
        { width: W, height: H, viewBox: `0 0 ${W} ${H}` },
        ...grid.map((v) => svg("line", { x1: 0, x2: W, y1: y(v), y2: y(v), stroke: C.line, "stroke-width": 1 })),
        svg("polyline", { points: xy.join(" "), fill: "none", stroke: bandColour(cur.band), "stroke-width": 3 }),
      ),
      h(
        "div",
        { justifyContent: "space-between", fontSize: 18, color: C.faint, marginTop: 6 },
        h("div", {}, day(t0)),
        h("div", {}, day(t1)),
      ),
    );
  }
  const stat = (label: string, value: string, colour = C.text) =>
    h(
      "div",
      { justifyContent: "space-between", alignItems: "center", marginTop: 10 },
      h("div", { fontSize: 22, color: C.muted }, label),
      h("div", { fontSize: 32, color: colour }, value),
    );
  return frame({
    asOf,
    kicker: "Stability index",
    route: "/api/og/stability-index",
    title: [
      h("div", { fontSize: 72, color: bandColour(cur.band), lineHeight: 1 }, cur.score.toFixed(1)),
      h("div", { fontSize: 34, color: C.muted }, "/ 100"),
      pill(cur.band, bandColour(cur.band)),
    ],
    subtitle: "Market-cap weighted peg stress across stablecoins (100 = every coin at peg)",
    body: row(
      { alignItems: "stretch" },
      h(
        "div",
        {
          flexDirection: "column",
          width: 380,
          background: C.panel,
          borderRadius: 18,
          padding: "12px 24px 18px",
          border: `1px solid ${C.line}`,
        },
        stat("24 h average", cur.avg24h.toFixed(1), bandColour(cur.avg24hBand)),
        stat("24 h band", cur.avg24hBand, bandColour(cur.avg24hBand)),
        stat("Coins in open depeg", String(cur.contributors.length)),
        stat("Market cap covered", usdCompact(cur.totalMcapUsd)),
      ),
      h(
        "div",
        {
          flexDirection: "column",
          flex: 1,
          background: C.panel,
          borderRadius: 18,
          padding: "14px 22px",
          border: `1px solid ${C.line}`,
          justifyContent: "center",
        },
        chart,
      ),
    ),
  });
}
