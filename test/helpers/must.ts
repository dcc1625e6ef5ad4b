/**
 * Unwraps a value a test expects to be present, in place of a non-null assertion (`x!`).
 *
 * Returns `value` unchanged when it is neither `null` nor `undefined`; otherwise throws an Error naming
 * `what` was missing, so the test fails with a clear message instead of a later TypeError.
 * Falsy values that are present (0, "", false, NaN) are returned as they are.
 *
 * @param value the value that should be present
 * @param what  a short description of the value, used in the error message (e.g. `"usdc-circle in the registry"`)
 */
export function must<T>(value: T | null | undefined, what = "value"): T {
  if (value === null || value === undefined)
    throw new Error(`expected ${what}, got ${value === null ? "null" : "undefined"}`);
  return value;
}
