/** A source file to scan: its repository path and text. */
export interface SourceText {
  file: string;
  text: string;
}

/** Two places sharing a block: file paths (a < b) and the 1-based line where the block starts in each. */
export interface DuplicateBlock {
  a: { file: string; line: number };
  b: { file: string; line: number };
}

/** Lines made only of brackets, parentheses, semicolons, commas and dots (`});`, `],`). */
const LONE_PUNCTUATION = /^[{}()[\];,.]*$/;
const COMMENT = /^(\/\/|\/\*|\*|--)/;

/**
 * The lines of a TypeScript or SQL text that count for duplication, trimmed, with their 1-based
 * line numbers: blank lines, comments (`//`, `/* … *\/` lines, `--`), import statements (one line or
 * several, and `export … from` re-exports) and lines of lone punctuation are skipped.
 */
export function significantLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let inImport = false;
  text.split("\n").forEach((raw, i) => {
    const t = raw.trim();
    if (inImport) {
      if (/\bfrom\s+["']/.test(t) || t.endsWith(";")) inImport = false;
      return;
    }
    if (/^(import|export)\b.*\bfrom\s+["']/.test(t) || /^import\s+["']/.test(t)) return;
    if (/^import\b/.test(t) || /^export\s+(type\s+)?\{[^}]*$/.test(t)) {
      inImport = true;
      return;
    }
    if (t === "" || COMMENT.test(t) || LONE_PUNCTUATION.test(t)) return;
    out.push({ line: i + 1, text: t });
  });
  return out;
}

/**
 * Pairs of different files that share a run of `minLines` (default 6) identical significant lines
 * (see {@link significantLines}; indentation aside): one entry per file pair, at its first shared
 * run (lowest line in `a`, then in `b`), sorted by the pair's paths. A run repeated inside one file
 * is not reported.
 */
export function findDuplicateBlocks(files: SourceText[], minLines = 6): DuplicateBlock[] {
  const where = new Map<string, Map<string, number>>();
  for (const { file, text } of files) {
    const lines = significantLines(text);
    for (let i = 0; i + minLines <= lines.length; i++) {
      const key = lines
        .slice(i, i + minLines)
        .map((l) => l.text)
        .join("\n");
      let at = where.get(key);
      if (!at) {
        at = new Map();
        where.set(key, at);
      }
      if (!at.has(file)) at.set(file, lines[i].line);
    }
  }
  const pairs = new Map<string, DuplicateBlock>();
  for (const at of where.values()) {
    if (at.size < 2) continue;
    const places = [...at].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    for (let i = 0; i < places.length; i++)
      for (let j = i + 1; j < places.length; j++) {
        const block = { a: { file: places[i][0], line: places[i][1] }, b: { file: places[j][0], line: places[j][1] } };
        const key = `${block.a.file}\n${block.b.file}`;
        const seen = pairs.get(key);
        if (!seen || block.a.line < seen.a.line || (block.a.line === seen.a.line && block.b.line < seen.b.line))
          pairs.set(key, block);
      }
  }
  return [...pairs.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, d]) => d);
}
