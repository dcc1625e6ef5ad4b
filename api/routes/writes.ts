import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { RouteDecl, WriteRoute } from "./route.ts";

/** Largest donor-claim body (spec 8: at most 4096 bytes). */
export const CLAIM_BODY_MAX_BYTES = 4096;

/** A donor-claim failure: `{ error, reason }` (spec 7 rule 1). */
export class ClaimError extends HttpError {
  constructor(status: 400 | 403 | 409 | 413 | 429 | 503, message: string, reason: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
    super(status, message, headers, { reason, ...extra });
  }
}

/** Public-host write routes of spec 4.4 besides the bot's: donor key claims and feedback. */
export const WRITE_ROUTES: RouteDecl[] = [
  {
    kind: "write", operationId: "claimDonorKey", method: "POST", path: "/api/donor-key-claims", lane: "signed-wallet", tag: "writes",
    summary: "Claim a supporter (donor) key", description: "SIWE-signed claim (spec 5.3).",
    responses: { "201": "Key issued", "503": "Claims unavailable" },
    handler: async () => { throw new ClaimError(403, "Supporter key claims are paused", "claims_closed"); },
  } satisfies WriteRoute,
  {
    kind: "write", operationId: "submitFeedback", method: "POST", path: "/api/feedback", lane: "public", tag: "writes",
    summary: "Submit feedback", description: "Feedback form submission.",
    responses: { "201": "Stored", "503": "Feedback store unavailable" },
    handler: async () => { throw notYetAvailable("feedback"); },
  } satisfies WriteRoute,
];
