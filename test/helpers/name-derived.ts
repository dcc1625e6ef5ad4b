/** Words a name-derived comment adds around the name: articles, type and unit boilerplate. */
const BOILERPLATE = new Set([
  "a",
  "an",
  "the",
  "of",
  "column",
  "field",
  "value",
  "json",
  "text",
  "boolean",
  "unix",
  "seconds",
  "usd",
  "bps",
  "basis",
  "points",
  "token",
  "units",
  "base",
  "native",
  "utc",
  "day",
  "score",
  "0",
  "1",
  "100",
  "id",
]);

/**
 * Whether `comment` only restates `column`'s name: every word of it is a word of the name (split on
 * `_`) or boilerplate (articles, "column", type and unit words), e.g. "Stablecoin id" for
 * `stablecoin_id` or "Amount raw, token base units" for `amount_raw`. Case-insensitive.
 */
export function nameDerived(column: string, comment: string): boolean {
  const name = new Set(column.toLowerCase().split("_"));
  const words = comment
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.every((w) => name.has(w) || BOILERPLATE.has(w));
}
