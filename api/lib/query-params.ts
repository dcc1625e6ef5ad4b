import { z } from "zod";

/**
 * Integer query parameter in [min, max], given as decimal digits. Every failure has one message
 * that states the accepted range (`must be an integer from 1 to 1000`), so a 400 names the
 * parameter and what it accepts, never a number-type limit.
 */
export const intParam = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`;
  return z
    .string({ error: message })
    .regex(/^\d{1,15}$/, message)
    .transform(Number)
    .refine((n) => n >= min && n <= max, message);
};

/** Boolean query parameter `true`/`false`, `def` when absent. */
export const boolParam = (def: boolean) =>
  z
    .enum(["true", "false"], { error: "must be true or false" })
    .optional()
    .transform((v) => (v === undefined ? def : v === "true"));

/** Required `stablecoin` query parameter: a canonical stablecoin id (an unknown id is the route's 404). */
export const stablecoinParam = () =>
  z.string({ error: "required" }).max(200, "must be at most 200 characters").describe("Canonical stablecoin id");
