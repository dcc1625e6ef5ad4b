import { z } from "zod";
import { MethodologySchema } from "../../site-data/peg-summary.ts";

/**
 * Body of a keyset-paged event list (`/api/blacklist`, `/api/mint-burn-events`): one page of `events`,
 * the matching total (`totalExact` false when it is a lower bound), the keyset cursor of the next page
 * (null on the last) and the methodology the events follow.
 */
export const eventPageSchema = <T extends z.ZodType>(event: T) =>
  z.object({
    events: z.array(event),
    total: z.number().int(),
    totalExact: z.boolean(),
    nextCursor: z.string().nullable(),
    methodology: MethodologySchema,
  });

/**
 * The body of one page that `keysetPage` cut: its rows, the total (exact when the request asked
 * `includeTotal`, else the rows up to this page's end as a lower bound), the next cursor and the
 * methodology block (`methodology(version, label, asOf)` of site-data/peg-summary.ts).
 */
export function eventPageBody<T, M>(
  page: { rows: T[]; nextCursor: string | null; total: number | null },
  q: { offset?: number; includeTotal: boolean },
  methodology: M,
): { events: T[]; total: number; totalExact: boolean; nextCursor: string | null; methodology: M } {
  return {
    events: page.rows,
    total: page.total ?? (q.offset ?? 0) + page.rows.length,
    totalExact: q.includeTotal,
    nextCursor: page.nextCursor,
    methodology,
  };
}
