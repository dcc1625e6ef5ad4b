import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import type { JsonRoute, RouteDecl, WriteContext, WriteRoute } from "./route.ts";

/** The bot service of a request, or the route's 503 while the server runs without a bot token. */
function bot(ctx: WriteContext, feature: string) {
  const t = ctx.services.telegram;
  if (!t) throw notYetAvailable(feature);
  return t;
}

/** Largest webhook update accepted (bytes); Telegram's updates are far smaller. */
const WEBHOOK_MAX_BYTES = 1 << 20;

/** The messaging-bot routes of spec 4.4 and 2.16. */
export const TELEGRAM_ROUTES: RouteDecl[] = [
  {
    kind: "write", operationId: "telegramWebhook", method: "POST", path: "/api/telegram-webhook", lane: "webhook", tag: "writes",
    summary: "Messaging-bot webhook",
    description: "Inbound bot updates; needs `X-Telegram-Bot-Api-Secret-Token` (compared in constant time). Answers plain-text `ok`. 404 while no webhook secret is configured.",
    requestBody: { mediaType: "application/json", description: "A Telegram Update object." },
    responses: { "200": "Plain-text `ok`", "400": "Body is not a JSON update", "401": "Missing or wrong secret", "404": "Webhook not configured", "413": "Update too large" },
    responseMediaType: "text/plain",
    handler: async (ctx) => {
      const t = bot(ctx, "telegram-webhook");
      let update: unknown;
      try {
        update = JSON.parse(Buffer.from(await ctx.readBody(WEBHOOK_MAX_BYTES)).toString("utf8"));
      } catch (err) {
        if (err instanceof HttpError) throw err;
        throw new HttpError(400, "Invalid JSON body");
      }
      await t.handleUpdate(update);
      return { status: 200, text: "ok" };
    },
  } satisfies WriteRoute,
  ...(["session", "mutate"] as const).map((kind): WriteRoute => ({
    kind: "write", operationId: kind === "session" ? "telegramMiniAppSession" : "telegramMiniAppMutate", method: "POST", path: `/api/telegram-mini-app/${kind}`, lane: "init-data", tag: "writes",
    summary: kind === "session" ? "Mini-app session" : "Mini-app mutation",
    description: "Signed mini-app init data. 503 while no bot is configured.",
    responses: { "200": "OK", "503": "No bot configured" },
    handler: async (ctx) => { bot(ctx, "telegram-mini-app"); throw notYetAvailable("telegram-mini-app"); },
  })),
  {
    kind: "write", operationId: "telegramAdoption", method: "POST", path: "/api/telegram-adoption", lane: "site", tag: "writes",
    summary: "Adoption pulse mutation (website-internal)", description: "Needs `X-Ballast-Site-Proxy-Secret`; 404 while none is configured.",
    responses: { "200": "OK", "401": "Missing or wrong site secret", "404": "Lane not configured" },
    handler: async (ctx) => { bot(ctx, "telegram-adoption"); throw notYetAvailable("telegram-adoption"); },
  } satisfies WriteRoute,
  {
    kind: "json", operationId: "getTelegramPulse", method: "GET", path: "/api/telegram-pulse", lane: "apiKey", tag: "peg", cache: "custom", meta: false, cacheable: false,
    summary: "Messaging-bot adoption pulse", description: "Adoption of the bot (spec 2.16). 503 while no bot is configured.",
    handler: async () => { throw notYetAvailable("telegram-pulse"); },
  } satisfies JsonRoute,
];
