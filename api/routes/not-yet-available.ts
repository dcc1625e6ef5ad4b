import { OG_IMAGES } from "../../site-data/og-images.ts";
import type { Lane } from "../lib/auth.ts";
import type { CacheProfile } from "../lib/freshness.ts";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import { OG_ROUTES } from "./og.ts";
import { MARKETS_ROUTES } from "./markets.ts";
import { RATINGS_ROUTES } from "./ratings.ts";
import { USDS_ROUTES } from "./usds.ts";
import { YIELD_ROUTES } from "./yields.ts";
import type { HandlerContext, JsonRoute, RouteDecl } from "./route.ts";

/**
 * A spec route whose data no build publishes yet: declared now, so it authenticates and answers 503 `Data not yet available: <feature>` with `Retry-After: 60` (spec 7
 * rule 3); it never invents data. Health lists the same features as not yet available.
 */
function later(operationId: string, path: string, feature: string, cache: CacheProfile, summary: string, lane: Lane = "apiKey"): JsonRoute {
  return {
    kind: "json", operationId, method: "GET", path, lane, tag: "not-yet-available", cache, meta: false, notYetAvailable: feature,
    summary, description: `${summary}. Not yet published by any build: answers 503 \`Data not yet available: ${feature}\` with \`Retry-After: 60\` until it is.`,
  };
}

/** Spec 4.1 read routes whose features land with later issues (status, bot pulse). */
export const NOT_YET_AVAILABLE_ROUTES: RouteDecl[] = [
  later("getTelegramPulse", "/api/telegram-pulse", "telegram-pulse", "custom", "Messaging-bot adoption pulse"),
];

/**
 * Route files whose routes are bound to optional artifacts (published only once their source has
 * rows, `Artifact.optional`). Listed here rather than read from `routes/index.ts`, which imports the
 * health route (an import cycle); a health test checks every optional binding of the table is here.
 */
export const OPTIONAL_ARTIFACT_ROUTES: RouteDecl[] = [...RATINGS_ROUTES, ...MARKETS_ROUTES, ...USDS_ROUTES, ...YIELD_ROUTES];

/** Whether an output is published: its file, or for a `{id}` template any file under the template's prefix. */
function isPublished(path: string, published: ReadonlySet<string>): boolean {
  if (!path.includes("{id}")) return published.has(path);
  const prefix = path.slice(0, path.indexOf("{id}"));
  for (const p of published) if (p.startsWith(prefix)) return true;
  return false;
}

/**
 * Features no build publishes yet, from the route table: feature → the GET paths answering 503 for
 * it (OpenAPI form): every `notYetAvailable` route, plus routes bound to an optional artifact whose
 * file (any file of a `{id}` output) is not among `published` (the serving build's file paths), under the artifact's key,
 * plus share-image routes (`og-images`) whose image (any per-coin image) the build lacks. Health
 * reports them (no effect on status), so the list cannot drift from the routes.
 */
export function notYetAvailableFeatures(published: ReadonlySet<string> = new Set()): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of [...NOT_YET_AVAILABLE_ROUTES, ...OPTIONAL_ARTIFACT_ROUTES]) {
    if (r.kind !== "json") continue;
    const feature = r.notYetAvailable ?? (r.artifact?.optional && !isPublished(r.artifact.output.path, published) ? r.artifact.key : undefined);
    if (feature) (out[feature] ??= []).push(r.path.replace(/:([A-Za-z]+)/g, "{$1}"));
  }
  for (const r of OG_ROUTES) {
    const image = Object.values(OG_IMAGES).find((i) => i.route === r.path);
    if (r.feature && image && !isPublished(image.path, published)) (out[r.feature] ??= []).push(r.path.replace(/:([A-Za-z]+)/g, "{$1}"));
  }
  return out;
}

/** JSON write route of spec 4.4 (never edge-cached). */
function write(operationId: string, path: string, lane: Lane, summary: string, description: string, handler: (ctx: HandlerContext) => Promise<never> | never): RouteDecl {
  return { kind: "json", operationId, method: "POST", path, lane, tag: "writes", cache: "no-store", meta: false, cacheable: false, summary, description, handler: async (ctx) => handler(ctx) };
}

/** Largest donor-claim body (spec 8: at most 4096 bytes). */
export const CLAIM_BODY_MAX_BYTES = 4096;

const notYet = (what: string) => () => { throw notYetAvailable(what); };

/**
 * Public-host write routes of spec 4.4, declared with their lanes. Donor claims are closed until the
 * donations ledger and safety grades exist (403 `claims_closed`, after the per-IP limit); the rest
 * answer 503 until their stores land. Webhook and website-internal routes are 404 until their lane
 * secret is configured.
 */
export const WRITE_ROUTES: RouteDecl[] = [
  write("claimDonorKey", "/api/donor-key-claims", "signed-wallet", "Claim a supporter (donor) key",
    "SIWE-signed claim (spec 5.3). Limited to 10 attempts per 60 s per client IP before the body is read (429 `{error, reason: \"rate_limited\"}`, `Retry-After: 60`); a body over 4096 bytes is 413 `{error, reason: \"body_invalid\"}`. Claims are closed until the donations ledger and safety grades are published: 403 `{error, reason: \"claims_closed\"}`, `Cache-Control: no-store`.",
    async (ctx) => {
      await ctx.readBody!(CLAIM_BODY_MAX_BYTES, { reason: "body_invalid" });
      throw new ClaimError(403, "Donor key claims are closed", "claims_closed");
    }),
  write("submitFeedback", "/api/feedback", "public", "Submit feedback", "Feedback form submission. 503 until the feedback store lands.", notYet("feedback")),
  write("telegramWebhook", "/api/telegram-webhook", "webhook", "Messaging-bot webhook", "Inbound bot updates; needs `X-Telegram-Bot-Api-Secret-Token`. 404 while no webhook secret is configured.", notYet("telegram-webhook")),
  write("telegramMiniAppSession", "/api/telegram-mini-app/session", "webhook", "Mini-app session", "Signed init data. 404 while no webhook secret is configured.", notYet("telegram-mini-app")),
  write("telegramMiniAppMutate", "/api/telegram-mini-app/mutate", "webhook", "Mini-app mutation", "Signed init data. 404 while no webhook secret is configured.", notYet("telegram-mini-app")),
  write("telegramAdoption", "/api/telegram-adoption", "site", "Adoption pulse mutation (website-internal)", "Needs `X-Ballast-Site-Proxy-Secret`; 404 while none is configured.", notYet("telegram-adoption")),
];

/** A donor-claim failure: `{ error, reason }` (spec 7 rule 1). */
export class ClaimError extends HttpError {
  constructor(status: 403 | 409 | 429 | 503, message: string, reason: string) {
    super(status, message, {}, { reason });
  }
}
