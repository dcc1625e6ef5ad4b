import { type ParseError, parse as parseTolerant } from "jsonc-parser";
import Papa from "papaparse";
import type { ReaderOutput, ReaderProblem } from "./types.ts";

/**
 * Shared plumbing of the capture readers (text formats only; no upstream semantics): CSV with
 * counted, row-level parse errors, and JSON whose parse errors name the position.
 */

/** Most problems a reader keeps with line numbers (all are counted in `dropped`). */
export const READER_PROBLEM_LIMIT = 10;

/** Drop reason for a CSV row papaparse could not parse cleanly (wrong field count, broken quotes). */
export const CSV_PARSE_ERROR = "csv-parse-error";

/** Counted drops and the first few located problems of one reader run. */
export class ReaderDrops {
  readonly dropped: Record<string, number> = {};
  readonly problems: ReaderProblem[] = [];

  drop(reason: string, count = 1): void {
    this.dropped[reason] = (this.dropped[reason] ?? 0) + count;
  }

  problem(p: ReaderProblem): void {
    if (this.problems.length < READER_PROBLEM_LIMIT) this.problems.push(p);
  }

  /** A ReaderOutput carrying these drops (problems only when there are any). */
  output(captures: ReaderOutput["captures"]): ReaderOutput {
    return { captures, dropped: this.dropped, ...(this.problems.length ? { problems: this.problems } : {}) };
  }
}

/** 1-based line of char offset `offset` given the sorted offsets of every `\n` in the text. */
function lineAt(newlines: number[], offset: number): number {
  let lo = 0;
  let hi = newlines.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (newlines[mid] < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

function newlineOffsets(text: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) out.push(i);
  return out;
}

/**
 * Parses CSV text (a leading UTF-8 BOM is removed; empty lines skipped). With `header`, rows are
 * objects keyed by the header; without, arrays whose length must equal the first row's. A row
 * papaparse reports an error for (TooFewFields, TooManyFields, MissingQuotes, InvalidQuotes, …)
 * or of the wrong width is dropped and counted in `drops` as `csv-parse-error`, its line kept.
 */
export function readCsvRows(text: string, drops: ReaderDrops, opts: { header: false }): string[][];
export function readCsvRows(text: string, drops: ReaderDrops, opts?: { header: true }): Record<string, string>[];
export function readCsvRows(
  text: string,
  drops: ReaderDrops,
  opts: { header: boolean } = { header: true },
): (Record<string, string> | string[])[] {
  const clean = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const newlines = newlineOffsets(clean);
  const rows: (Record<string, string> | string[])[] = [];
  let width: number | undefined;
  Papa.parse<Record<string, string> | string[]>(clean, {
    header: opts.header,
    skipEmptyLines: true,
    step: (res) => {
      const line = lineAt(newlines, res.meta.cursor - 1);
      const err = res.errors[0];
      if (err) {
        drops.drop(CSV_PARSE_ERROR);
        drops.problem({ line, code: err.code ?? err.type, message: err.message });
        return;
      }
      if (!opts.header) {
        const fields = res.data as string[];
        width ??= fields.length;
        if (fields.length !== width) {
          drops.drop(CSV_PARSE_ERROR);
          drops.problem({
            line,
            code: fields.length < width ? "TooFewFields" : "TooManyFields",
            message: `expected ${width} fields but parsed ${fields.length}`,
          });
          return;
        }
      }
      rows.push(res.data);
    },
  });
  return rows;
}

/** A JSON text that does not parse; `offset` is the char offset of the first error (0-based), line/column 1-based. */
export class JsonPositionError extends SyntaxError {
  constructor(
    message: string,
    readonly offset: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = "JsonPositionError";
  }
}

/**
 * Char offset of the first syntax error in `text`, or -1 when none is found. Located with
 * jsonc-parser's error-tolerant parser (comments and trailing commas disallowed, as in RFC 8259);
 * used only after JSON.parse failed, to name the position.
 */
export function locateJsonError(text: string): number {
  const errors: ParseError[] = [];
  parseTolerant(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  return errors.length ? Math.min(...errors.map((e) => e.offset)) : -1;
}

/**
 * JSON.parse that, on failure, throws a JsonPositionError whose message names the line, column
 * and char offset of the first error (V8's own message does not always carry a position).
 */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const found = locateJsonError(text);
    const v8 = /at position (\d+)/.exec((e as Error).message);
    const offset = found >= 0 ? found : v8 ? Number(v8[1]) : text.length;
    const before = text.slice(0, offset);
    const line = (before.match(/\n/g)?.length ?? 0) + 1;
    const column = offset - (before.lastIndexOf("\n") + 1) + 1;
    const what =
      offset >= text.length
        ? "unexpected end of input"
        : `unexpected ${JSON.stringify(text.slice(offset, offset + 12))}`;
    throw new JsonPositionError(
      `invalid JSON at line ${line}, column ${column} (char offset ${offset}): ${what} (${(e as Error).message})`,
      offset,
      line,
      column,
    );
  }
}

/** A reader of an upstream JSON file kept as-is (one capture, `params`). Invalid JSON throws a JsonPositionError naming line/column/offset. */
export function readJsonFile(params: Record<string, string> = {}) {
  return (text: string): ReaderOutput => ({ captures: [{ params, payload: parseJsonText(text) }], dropped: {} });
}
