/**
 * `value` itself when it is present; throws `Error("<what> is missing")` when it is null or undefined.
 * For values an invariant of the caller guarantees (a key just inserted in a map, a field a validated
 * shape requires), where absence would be a bug: the error names what was missing instead of a later
 * `TypeError` on `undefined`.
 * @throws Error when `value` is null or undefined.
 */
export function must<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`${what} is missing`);
  return value;
}
