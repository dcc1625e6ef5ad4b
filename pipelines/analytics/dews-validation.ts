import { DEWS_VALIDATION_VERSION } from "./dews-validation.version.ts";
import { DEPEG_METHODOLOGY_VERSION } from "./depeg-detection.version.ts";
import { DAY, DEWS_VERSION, type DewsBand } from "./stress-signals.version.ts";

/**
 * Validation of DEWS against the depeg history (spec 4.5 `GET /api/backfill-dews`), methodology
 * `ballast-dews-validation-v1`. Pure: the job (build/depeg-backtest.ts) hands it every `dews_daily`
 * row and every depeg incident of a build over the recorded history.
 *
 * Timing is honest about when a score exists: DEWS of UTC day D reads the slots of (D, D+1 day], so it
 * is known at D + 1 day (its "issue time"), not at D. A warning counts only when issued at or before
 * the depeg's start; the score of the day the depeg starts in already reads the depeg's own prices
 * (its divergence signal) and is reported apart (`at-onset`), never as a lead.
 *
 * Per incident (horizon H = 7 days, alert = band ALERT or worse, i.e. score ≥ 36):
 * - `warned`: an alert issued in [start − H, start]; lead time = start − issue time of the crossing:
 *   the first day of the run of consecutive alert days that holds the latest such alert (hours; it may
 *   exceed H when the coin was at alert for longer).
 * - `at-onset`: no alert before, one issued in (start, start + 1 day] (the start day's own score).
 * - `missed`: DEWS scored the coin in [start − H, start] but never at alert.
 * - `not-covered`: no DEWS row issued in [start − H, start] (archive gap, coin not yet scored,
 *   excluded universe): left out of recall rather than counted as a miss.
 * An incident starting within H after an earlier incident of the same coin ended (or while it was
 * open) is a `followUp`: an alert before it may be the earlier incident's. Recall is reported over all
 * covered incidents and over fresh ones (not follow-ups).
 *
 * Alert episodes: maximal runs of consecutive days at alert per coin, first issued at t0.
 * - `true`: an incident of the coin starts in [t0, t0 + H];
 * - `in-event`: no such start, but an incident of the coin was open at t0 or ended within H before
 *   it (the alert describes a depeg under way or its aftermath);
 * - `open`: neither, and t0 + H is after as-of (cannot be judged yet);
 * - `false`: otherwise (a false alarm).
 * precision = true ÷ (true + false); recall = warned ÷ covered.
 *
 * Version: `DEWS_VALIDATION_VERSION` (./dews-validation.version.ts).
 */
export const HORIZON_SEC = 7 * DAY;
export const ALERT_SCORE = 36;

/** One `dews_daily` row: coin, day (Unix s of 00:00 UTC), score 0-100 and band. */
export interface DewsDay {
  stablecoinId: string;
  day: number;
  score: number;
  band: DewsBand;
}
/** One depeg incident: id, coin, direction, signed peak (bps), start and end (Unix s; end null while open). */
export interface ValidationEvent {
  id: number;
  stablecoinId: string;
  symbol: string;
  direction: string;
  peakDeviationBps: number;
  startedAt: number;
  endedAt: number | null;
}

export type EventOutcome = "warned" | "at-onset" | "missed" | "not-covered";
export type AlertOutcome = "true" | "in-event" | "open" | "false";

/** Outcome of one incident; `leadHours` and `alertIssuedAt` only when warned. */
export interface EventValidation extends ValidationEvent {
  outcome: EventOutcome;
  followUp: boolean;
  leadHours: number | null;
  alertIssuedAt: number | null;
  /** Highest DEWS issued in [start − H, start], null when none. */
  maxScoreBefore: number | null;
}
/** One alert episode of a coin: its first and last day (Unix s), peak score, outcome and the incident it warned of. */
export interface AlertEpisode {
  stablecoinId: string;
  firstDay: number;
  lastDay: number;
  issuedAt: number;
  peakScore: number;
  outcome: AlertOutcome;
  eventId: number | null;
}
/** Counts and rates of a set of incidents and alert episodes (per coin, or overall). */
export interface ValidationCounts {
  events: number;
  covered: number;
  warned: number;
  atOnset: number;
  missed: number;
  notCovered: number;
  freshCovered: number;
  freshWarned: number;
  alertEpisodes: number;
  trueAlerts: number;
  falseAlarms: number;
  inEventAlerts: number;
  openAlerts: number;
  /** warned ÷ covered; null when nothing is covered. */
  recall: number | null;
  /** freshWarned ÷ freshCovered; null when no fresh incident is covered. */
  recallFresh: number | null;
  /** true ÷ (true + false); null without a judged episode. */
  precision: number | null;
  /** Median and mean lead time of warned incidents, hours; null when none. */
  medianLeadHours: number | null;
  meanLeadHours: number | null;
}

const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);
const hours = (sec: number) => Math.round((sec / 3600) * 10) / 10;

function counts(events: EventValidation[], episodes: AlertEpisode[]): ValidationCounts {
  const n = (o: EventOutcome, list = events) => list.filter((e) => e.outcome === o).length;
  const a = (o: AlertOutcome) => episodes.filter((e) => e.outcome === o).length;
  const covered = events.filter((e) => e.outcome !== "not-covered");
  const fresh = covered.filter((e) => !e.followUp);
  const leads = events.flatMap((e) => (e.leadHours === null ? [] : [e.leadHours])).sort((x, y) => x - y);
  const mid = leads.length >> 1;
  const median = !leads.length ? null : leads.length % 2 ? leads[mid] : (leads[mid - 1] + leads[mid]) / 2;
  const t = a("true"),
    f = a("false");
  return {
    events: events.length,
    covered: covered.length,
    warned: n("warned"),
    atOnset: n("at-onset"),
    missed: n("missed"),
    notCovered: n("not-covered"),
    freshCovered: fresh.length,
    freshWarned: n("warned", fresh),
    alertEpisodes: episodes.length,
    trueAlerts: t,
    falseAlarms: f,
    inEventAlerts: a("in-event"),
    openAlerts: a("open"),
    recall: ratio(n("warned"), covered.length),
    recallFresh: ratio(n("warned", fresh), fresh.length),
    precision: ratio(t, t + f),
    medianLeadHours: median === null ? null : Math.round(median * 10) / 10,
    meanLeadHours: leads.length ? Math.round((leads.reduce((s, x) => s + x, 0) / leads.length) * 10) / 10 : null,
  };
}

/** The validation report: methodology, overall and per-coin counts, every incident and alert episode. */
export interface DewsValidationReport {
  methodology: {
    version: string;
    dewsVersion: string;
    depegVersion: string;
    horizonHours: number;
    alertScore: number;
    scoreIssuedAt: string;
  };
  asOf: number;
  /** First and last DEWS day scored (Unix s), null without rows. */
  dewsDays: { first: number; last: number } | null;
  overall: ValidationCounts;
  coins: (ValidationCounts & { stablecoinId: string; symbol: string })[];
  events: EventValidation[];
  alertEpisodes: AlertEpisode[];
}

/**
 * Validates `dews` against `events` as of `asOf` (Unix s): see the module comment. Coins are listed by
 * id; incidents by start; a coin is listed when it has an incident or an alert episode.
 */
export function validateDews(dews: DewsDay[], events: ValidationEvent[], asOf: number): DewsValidationReport {
  const byCoin = new Map<string, DewsDay[]>();
  for (const d of dews) {
    const list = byCoin.get(d.stablecoinId);
    if (list) list.push(d);
    else byCoin.set(d.stablecoinId, [d]);
  }
  for (const rows of byCoin.values()) rows.sort((a, b) => a.day - b.day);
  const eventsOf = new Map<string, ValidationEvent[]>();
  for (const e of [...events].sort((a, b) => a.startedAt - b.startedAt || a.id - b.id))
    eventsOf.set(e.stablecoinId, [...(eventsOf.get(e.stablecoinId) ?? []), e]);

  const validated: EventValidation[] = [];
  for (const [coin, list] of eventsOf) {
    const days = byCoin.get(coin) ?? [];
    list.forEach((e, i) => {
      const before = days.filter((d) => d.day + DAY >= e.startedAt - HORIZON_SEC && d.day + DAY <= e.startedAt);
      // the crossing: first day of the alert run holding the latest alert issued in the window
      const latest = [...before].reverse().find((d) => d.score >= ALERT_SCORE);
      let alert = latest;
      if (latest) {
        let k = days.indexOf(latest);
        while (k > 0 && days[k - 1].score >= ALERT_SCORE && days[k - 1].day === days[k].day - DAY) k--;
        alert = days[k];
      }
      const onset = days.find((d) => d.day + DAY > e.startedAt && d.day + DAY <= e.startedAt + DAY);
      const followUp = list.slice(0, i).some((p) => p.endedAt === null || p.endedAt >= e.startedAt - HORIZON_SEC);
      const outcome: EventOutcome = alert
        ? "warned"
        : onset && onset.score >= ALERT_SCORE
          ? "at-onset"
          : before.length
            ? "missed"
            : "not-covered";
      validated.push({
        ...e,
        outcome,
        followUp,
        leadHours: alert ? hours(e.startedAt - (alert.day + DAY)) : null,
        alertIssuedAt: alert ? alert.day + DAY : null,
        maxScoreBefore: before.length ? Math.max(...before.map((d) => d.score)) : null,
      });
    });
  }
  validated.sort((a, b) => a.startedAt - b.startedAt || a.id - b.id);

  const episodes: AlertEpisode[] = [];
  for (const [coin, days] of [...byCoin.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const list = eventsOf.get(coin) ?? [];
    let run: DewsDay[] = [];
    const close = () => {
      if (!run.length) return;
      const first = run[0].day;
      const t0 = first + DAY;
      const warned = list.find((e) => e.startedAt >= t0 && e.startedAt <= t0 + HORIZON_SEC);
      const ongoing = list.some(
        (e) => e.startedAt < t0 && (e.endedAt === null || e.endedAt >= first - HORIZON_SEC + DAY),
      );
      episodes.push({
        stablecoinId: coin,
        firstDay: first,
        lastDay: run[run.length - 1].day,
        issuedAt: t0,
        peakScore: Math.max(...run.map((d) => d.score)),
        outcome: warned ? "true" : ongoing ? "in-event" : t0 + HORIZON_SEC > asOf ? "open" : "false",
        eventId: warned ? warned.id : null,
      });
      run = [];
    };
    for (const d of days) {
      if (d.score < ALERT_SCORE) {
        close();
        continue;
      }
      if (run.length && d.day !== run[run.length - 1].day + DAY) close();
      run.push(d);
    }
    close();
  }

  const coinIds = [...new Set([...eventsOf.keys(), ...episodes.map((e) => e.stablecoinId)])].sort();
  const symbolOf = new Map(events.map((e) => [e.stablecoinId, e.symbol]));
  const first = dews.reduce((m, d) => Math.min(m, d.day), Number.POSITIVE_INFINITY);
  const last = dews.reduce((m, d) => Math.max(m, d.day), Number.NEGATIVE_INFINITY);
  return {
    methodology: {
      version: DEWS_VALIDATION_VERSION,
      dewsVersion: DEWS_VERSION,
      depegVersion: DEPEG_METHODOLOGY_VERSION,
      horizonHours: HORIZON_SEC / 3600,
      alertScore: ALERT_SCORE,
      scoreIssuedAt: "end of its UTC day (the day's slots are all read then)",
    },
    asOf,
    dewsDays: dews.length ? { first, last } : null,
    overall: counts(validated, episodes),
    coins: coinIds.map((id) => ({
      stablecoinId: id,
      symbol: symbolOf.get(id) ?? id,
      ...counts(
        validated.filter((e) => e.stablecoinId === id),
        episodes.filter((e) => e.stablecoinId === id),
      ),
    })),
    events: validated,
    alertEpisodes: episodes,
  };
}
