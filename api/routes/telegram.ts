import { z } from "zod";
import { HttpError, notYetAvailable } from "../lib/http-error.ts";
import { parseJsonBody } from "../lib/json-body.ts";
import { MiniAppMutateBodySchema, MiniAppSessionBodySchema } from "../lib/telegram/mini-app.ts";
import { PULSE_EVERY_SEC, TelegramPulseSchema } from "../lib/telegram/pulse.ts";
import type { TelegramUpdate } from "../lib/telegram/service.ts";
import type { HandlerContext, JsonRoute, RouteDecl, WriteContext, WriteRoute } from "./route.ts";

/** The bot service of a request, or the route's 503 while the server runs without a bot token. */
function bot(ctx: Pick<HandlerContext, "services">, feature: string) {
  const t = ctx.services.telegram;
  if (!t) throw notYetAvailable(feature);
  return t;
}

/** Largest webhook update accepted (bytes); Telegram's updates are far smaller. */
const WEBHOOK_MAX_BYTES = 1 << 20;
/** Largest mini-app body accepted (bytes): init data is at most a few KiB. */
const MINI_APP_MAX_BYTES = 16 * 1024;
/** Largest adoption body accepted (bytes): it carries nothing. */
const ADOPTION_MAX_BYTES = 1024;

/** A webhook body: a JSON object with an integer `update_id` (grammY reads the rest). */
const UpdateSchema = z.looseObject({ update_id: z.number().int().nonnegative() });
/** The adoption POST takes no fields: an empty body or `{}`. */
const AdoptionBodySchema = z.strictObject({});

/** The body of a bot route: JSON checked against `schema` (400 naming the field; 413 past `maxBytes`). */
async function jsonBody<T>(ctx: WriteContext, schema: z.ZodType<T>, maxBytes: number, emptyOk = false): Promise<T> {
  return parseJsonBody(await ctx.readBody(maxBytes), schema, { emptyOk });
}

const MINI_APP_ERRORS = {
  "400": "Body is not JSON, or a field is missing or invalid (the message names it)",
  "401":
    "Init data invalid (`reason: init_data_invalid`: hash missing or wrong, no user) or expired (`reason: init_data_expired`)",
  "403": "Refused on the website-internal lane (the request carries `X-Ballast-Site-Proxy-Secret`)",
  "413": `Body larger than ${MINI_APP_MAX_BYTES} bytes`,
  "503": "No bot configured, or the state store is unavailable (`Retry-After: 60`)",
};

/** The bot of a mini-app call, refused (403, counted as denied) when the call came through the website-internal lane. */
async function miniAppBot(ctx: WriteContext) {
  const t = bot(ctx, "telegram-mini-app");
  if (ctx.viaSiteLane) {
    await t.recordDenied(ctx.wallNow);
    throw new HttpError(403, "Mini-app calls are not accepted on the website-internal lane");
  }
  return t;
}

/** Scope of a bot call: the serving build (coin list) and the wall clock. */
const scope = (ctx: WriteContext | HandlerContext) => ({ build: ctx.build, wallNow: ctx.wallNow });

/** The messaging-bot routes of spec 4.4 and 2.16. */
export const TELEGRAM_ROUTES: RouteDecl[] = [
  {
    kind: "write",
    operationId: "telegramWebhook",
    method: "POST",
    path: "/api/telegram-webhook",
    lane: "webhook",
    tag: "writes",
    summary: "Messaging-bot webhook",
    description:
      "Inbound bot updates; needs `X-Telegram-Bot-Api-Secret-Token` (compared in constant time). Answers plain-text `ok` once the update is stored; " +
      "replies are queued and go out through the Bot API in the background, so the answer never waits on the Bot API (while the bot's identity cannot be fetched, " +
      "updates are acknowledged within about 2 s and handled once it can). An update whose handling fails for another reason than the state store is logged and still acknowledged with `ok` " +
      "(no retry storm); 503 when the state store is unavailable, so Telegram retries it later. 404 while no webhook secret is configured.",
    requestBody: {
      mediaType: "application/json",
      schema: UpdateSchema,
      description: `A Telegram Update object (at most ${WEBHOOK_MAX_BYTES} bytes).`,
    },
    responses: {
      "200": "Plain-text `ok`",
      "400": "Body is not JSON, or not an update (no integer `update_id`)",
      "401": "Missing or wrong secret",
      "404": "Webhook not configured",
      "413": `Update larger than ${WEBHOOK_MAX_BYTES} bytes`,
      "503": "No bot configured, or its state store is unavailable: Telegram retries (`Retry-After: 60`)",
    },
    responseMediaType: "text/plain",
    handler: async (ctx) => {
      const t = bot(ctx, "telegram-webhook");
      const update = (await jsonBody(ctx, UpdateSchema, WEBHOOK_MAX_BYTES)) as TelegramUpdate;
      await t.handleUpdate(update, scope(ctx));
      return { status: 200, text: "ok" };
    },
  } satisfies WriteRoute,
  {
    kind: "write",
    operationId: "telegramMiniAppSession",
    method: "POST",
    path: "/api/telegram-mini-app/session",
    lane: "init-data",
    tag: "writes",
    summary: "Mini-app session",
    description:
      "Opens a mini-app session: verifies the signed init data (HMAC with the bot token, `auth_date` at most 24 h old by default, a user payload) " +
      "and answers the user's private chat: `{ chatId, active, inactiveReason, coins: [{id, symbol}], presets, availablePresets: [{name, description, coins}], mutateUntil }` " +
      "(`mutateUntil`: Unix s until which this init data is accepted by `/mutate`). Refused on the website-internal lane. Always `no-store`.",
    requestBody: {
      mediaType: "application/json",
      schema: MiniAppSessionBodySchema,
      description: "`{ initData }`: `Telegram.WebApp.initData` as received.",
    },
    responses: { "200": "The user's follows", ...MINI_APP_ERRORS },
    handler: async (ctx) => {
      const t = await miniAppBot(ctx);
      const body = await jsonBody(ctx, MiniAppSessionBodySchema, MINI_APP_MAX_BYTES);
      return { status: 200, json: await t.miniAppSession(body, scope(ctx)) };
    },
  } satisfies WriteRoute,
  {
    kind: "write",
    operationId: "telegramMiniAppMutate",
    method: "POST",
    path: "/api/telegram-mini-app/mutate",
    lane: "init-data",
    tag: "writes",
    summary: "Mini-app mutation",
    description:
      "Follows or unfollows one stablecoin or preset for the user's private chat, after verifying the init data (`auth_date` at most 1 h old by default). " +
      "Answers the session's state plus `{ action, target, changed }`. The same `(initData, requestId)` twice is a replay claim: 409 `reason: init_data_replayed`, nothing changes. " +
      "A follow opts the chat in (unless it blocked the bot). Refused on the website-internal lane. Always `no-store`.",
    requestBody: {
      mediaType: "application/json",
      schema: MiniAppMutateBodySchema,
      description: "`{ initData, requestId, action: follow|unfollow, coin | preset }`.",
    },
    responses: {
      "200": "The user's follows after the mutation",
      ...MINI_APP_ERRORS,
      "404": "Unknown stablecoin id or preset",
      "409": "Replay claim: requestId already used with this init data (`reason: init_data_replayed`)",
      "503":
        "No bot configured, no coin list published yet (coin mutations), or the state store is unavailable (`Retry-After: 60`)",
    },
    handler: async (ctx) => {
      const t = await miniAppBot(ctx);
      const body = await jsonBody(ctx, MiniAppMutateBodySchema, MINI_APP_MAX_BYTES);
      return { status: 200, json: await t.miniAppMutate(body, scope(ctx)) };
    },
  } satisfies WriteRoute,
  {
    kind: "write",
    operationId: "telegramAdoption",
    method: "POST",
    path: "/api/telegram-adoption",
    lane: "site",
    tag: "writes",
    summary: "Adoption snapshot (website-internal)",
    description:
      "Records today's (UTC) watcher lifecycle snapshot, replacing an earlier one of the same day, so the pulse reads `historySource: snapshot`; the website's " +
      "scheduler calls it once a day. Answers the snapshot `{ day, snapshotAt, activeWatchers, newWatchers, churnedWatchers, reactivatedWatchers, coinSubscriptions, " +
      "explicitCoinSubscriptions, presetImpliedCoinSubscriptions, activePresetFollowers }` (exact counts: internal). Needs `X-Ballast-Site-Proxy-Secret`; 404 while none is configured.",
    requestBody: {
      mediaType: "application/json",
      schema: AdoptionBodySchema,
      description: "Empty, or `{}`: the snapshot is computed from the state store.",
    },
    responses: {
      "200": "The recorded snapshot",
      "400": "Body is not empty, `{}` or JSON",
      "401": "Missing or wrong site secret",
      "404": "Lane not configured",
      "413": `Body larger than ${ADOPTION_MAX_BYTES} bytes`,
      "503": "No bot configured, or the state store is unavailable (`Retry-After: 60`)",
    },
    handler: async (ctx) => {
      const t = bot(ctx, "telegram-adoption");
      await jsonBody(ctx, AdoptionBodySchema, ADOPTION_MAX_BYTES, true);
      return { status: 200, json: await t.recordAdoption(scope(ctx)) };
    },
  } satisfies WriteRoute,
  {
    kind: "json",
    operationId: "getTelegramPulse",
    method: "GET",
    path: "/api/telegram-pulse",
    lane: "apiKey",
    tag: "peg",
    cache: "custom",
    meta: false,
    cacheable: false,
    maxAgeSec: PULSE_EVERY_SEC,
    summary: "Messaging-bot adoption pulse",
    description:
      "Adoption of the bot (spec 2.16), computed from the state store on request (its counts over wall-clock UTC days; `updatedAt` and `X-Data-Updated-At` on the service clock, the replay clock of a recorded build like every route). Counts of people from 1 to 4 are null and listed in " +
      "`privacy.suppressedFields`; while there are 1-4 active watchers, the subscription counts and `topCoins` are too. 503 while no bot is configured or its state store is unavailable.",
    response: TelegramPulseSchema,
    handler: async (ctx) => {
      const t = bot(ctx, "telegram-pulse");
      // Computed now from the state store: its data age is 0 on the service clock, and its body says so on that
      // same clock (the replay clock of a recorded build, like every route's X-Data-Updated-At), not the wall clock.
      const pulse = await t.pulse(scope(ctx));
      return { payload: { ...pulse, updatedAt: ctx.now }, dataAsOf: ctx.now };
    },
  } satisfies JsonRoute,
];
