import { z } from "zod";

/** Integer query parameter in [min, max], given as decimal digits (400 names the parameter otherwise). */
export const intParam = (min: number, max: number) =>
  z.string().regex(/^\d+$/, "must be an integer").transform(Number).pipe(z.number().int().min(min).max(max));

/** Boolean query parameter `true`/`false`, `def` when absent. */
export const boolParam = (def: boolean) => z.enum(["true", "false"]).optional().transform((v) => (v === undefined ? def : v === "true"));
