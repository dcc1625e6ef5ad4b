import {
  CLAIM_ATTEMPTS_PER_MINUTE,
  CLAIM_BODY_MAX_BYTES,
  CLAIM_STATEMENT,
  ClaimBodyDoc,
  claimDonorKey,
  ClaimError,
  DONOR_MIN_USD,
} from "../lib/donor-claims.ts";
import {
  FEEDBACK_MAX_BYTES,
  FEEDBACK_MAX_SUBMISSIONS,
  FEEDBACK_WINDOW_SEC,
  FeedbackBodySchema,
  TOO_MANY_SUBMISSIONS,
} from "../lib/feedback.ts";
import { HttpError } from "../lib/http-error.ts";
import type { RouteDecl, WriteRoute } from "./route.ts";
import { declareTag } from "./tags.ts";

/** Public-host write routes of spec 4.4 besides the bot's: donor key claims and feedback. */
export const WRITE_ROUTES: RouteDecl[] = [
  {
    kind: "write",
    operationId: "claimDonorKey",
    method: "POST",
    path: "/api/donor-key-claims",
    lane: "signed-wallet",
    tag: declareTag("writes", "Public-host write routes (spec 4.4)."),
    summary: "Claim a supporter (donor) key",
    description: [
      `A wallet whose donations in qualifying stablecoins total at least USD ${DONOR_MIN_USD} (receipt-date value; coins graded A+ to B- now) signs an EIP-4361 message (personal_sign) and gets one \`donor\` key: 10 requests per minute, no expiry (spec 5.3).`,
      `The message must be exactly the canonical one for its address, nonce (≥ 8 letters or digits) and issue time: the configured domain, statement "${CLAIM_STATEMENT}", URI = the API page, Version 1, the configured Chain ID, Issued At within 5 minutes of now, Expiration Time = Issued At + 5 minutes.`,
      `Order: closed switch (403 \`claims_closed\`); ${CLAIM_ATTEMPTS_PER_MINUTE} attempts per 60 s per client IP before the body is read (429 \`rate_limited\`, \`Retry-After: 60\`); ledger; body ≤ ${CLAIM_BODY_MAX_BYTES} bytes; message; signature (canonical 65-byte low-s form only, 400 \`signature_invalid\`); the message's first use (a message presented before, whatever its outcome, is 400 \`siwe_invalid\`: sign a new one); an existing claim (409 \`claim_exists\` / \`claim_orphaned\`, 403 \`claim_revoked\`; re-signing never rotates); grades; eligibility; issuance of key and claim together.`,
      "Every answer is `Cache-Control: no-store`; failures are `{ error, reason }`, and 403 `ineligible` adds `ledgerUpdatedAt`, `qualifyingUsd`, `countedAssets`.",
    ].join("\n\n"),
    requestBody: {
      mediaType: "application/json",
      schema: ClaimBodyDoc,
      description: "`{ message, signature }`: the EIP-4361 message and its personal_sign signature (0x hex).",
    },
    responses: {
      "201":
        '`{ status: "issued", key: { keyPrefix, maskedToken, tier: "donor", rateLimitPerMinute: 10, expiresAt: null }, token }`; the token is shown once',
      "400": "`body_invalid`, `siwe_invalid`, `signature_invalid`",
      "403":
        "`claims_closed`, `claim_revoked`, `ineligible` (with `ledgerUpdatedAt`, `qualifyingUsd`, `countedAssets`)",
      "409": "`claim_exists`, `claim_orphaned`",
      "413": "`body_invalid`: body over 4096 bytes",
      "429": "`rate_limited`, `Retry-After: 60`",
      "503":
        "`rate_limiter_missing`, `rate_limit_unavailable`, `donations_ledger_invalid`, `safety_scores_unavailable`, `grade_unavailable`, `pepper_missing`, `issue_failed` (`Retry-After: 60`)",
    },
    handler: async (ctx) => {
      const deps = ctx.services.donorClaims;
      if (!deps) throw new ClaimError(403, "Supporter key claims are paused", "claims_closed");
      return { status: 201, json: await claimDonorKey(deps, ctx) };
    },
  } satisfies WriteRoute,
  {
    kind: "write",
    operationId: "submitFeedback",
    method: "POST",
    path: "/api/feedback",
    lane: "public",
    tag: "writes",
    summary: "Submit feedback",
    description: `A feedback form submission, stored for the operators: an HTML form post (\`application/x-www-form-urlencoded\`; blank optional fields count as absent, a repeated field is 400) or the same fields as a JSON body, at most ${FEEDBACK_MAX_BYTES} bytes; unknown fields are 400. Limited to ${FEEDBACK_MAX_SUBMISSIONS} submissions per ${FEEDBACK_WINDOW_SEC / 60} minutes per client IP, separately from key quotas (429 \`${TOO_MANY_SUBMISSIONS}\` with \`Retry-After\`); 503 with \`Retry-After: 60\` while that limiter or the state store is unavailable. The client IP is never stored.`,
    requestBody: {
      mediaType: "application/json",
      schema: FeedbackBodySchema,
      description:
        "`message` (required, 1-4000 characters); optional `email`, `page` (the site page it is about), `stablecoinId`.",
    },
    responses: {
      "201": '`{ status: "received", id }`',
      "400": "Invalid JSON or field: the message names it",
      "413": `Body over ${FEEDBACK_MAX_BYTES} bytes`,
      "429": TOO_MANY_SUBMISSIONS,
      "503": "Feedback limiter or store unavailable (`Retry-After: 60`)",
    },
    handler: async (ctx) => {
      const feedback = ctx.services.feedback;
      if (!feedback) throw new HttpError(503, "Feedback temporarily unavailable", { "Retry-After": "60" });
      const body = await ctx.readBody(FEEDBACK_MAX_BYTES);
      const id = await feedback.submit(body, ctx.ip, ctx.wallNow, ctx.header("content-type"));
      return { status: 201, json: { status: "received", id } };
    },
  } satisfies WriteRoute,
];
