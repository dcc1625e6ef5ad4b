import { Bot, type CommandContext, type Context, GrammyError } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import { apiLog, errorMessage } from "../log.ts";
import { SerialQueue } from "./serial-queue.ts";
import { type CoinCatalog, type CoinRef, PRESETS, type Preset, resolveTarget } from "./coins.ts";
import type { TelegramStore } from "./store.ts";

/**
 * The chat bot on grammY. Commands (in private chats and groups; `/cmd@botname` works in groups):
 * - `/start`: opts the chat in (a new watcher, or a stopped one back) and answers the help text;
 * - `/follow <coin|preset> …`: follows stablecoins (id `usdt-tether` or a symbol matching one coin,
 *   `USDT`) and presets (`majors`, `all`); several at once, separated by spaces or commas; opts in;
 * - `/unfollow <coin|preset> …`: the reverse (a followed id the list no longer carries can be unfollowed by id);
 * - `/list` (alias `/following`): what the chat follows, presets with the coins they imply;
 * - `/presets`: the presets and their coins; `/help`: the commands;
 * - `/stop`: the chat becomes inactive (it keeps its follows, gets no alerts; `/start` resumes).
 * A `my_chat_member` update saying the bot was blocked, kicked or left marks the chat inactive
 * (reason `blocked`); the bot added back (member / administrator) opts it in again. A reply that
 * Telegram refuses with 403 (bot blocked) marks the chat inactive too.
 *
 * Replies go out through the Bot API (`sendMessage`), never on the webhook response (the webhook
 * answers plain-text `ok`): they are queued and sent in the background, one at a time, so handling
 * an update never waits on the Bot API (a full queue drops the reply with a log line). A failed
 * reply is logged and does not fail the update (its state change is stored, a Telegram retry would
 * repeat it); a state-store failure propagates
 * ({@link TelegramStoreError}), so the webhook answers 503 and Telegram retries the update later.
 */

/** Per-update facts the handlers read: the build's coin catalog and the wall clock (Unix s) of the request. */
export interface UpdateScope {
  catalog: CoinCatalog;
  now: number;
}

/** Settings of {@link createBot}. */
export interface BotOptions {
  token: string;
  store: TelegramStore;
  /** Bot API root (tests: a local server); default Telegram's. */
  apiRoot?: string;
  /** Bot identity (`getMe`); when absent the bot calls `getMe` once before its first update. */
  botInfo?: UserFromGetMe;
  /** Seconds a Bot API call may take; default 10. */
  timeoutSeconds?: number;
  /** Most replies waiting to be sent; one more is dropped with a log line. Default 256. */
  maxQueuedReplies?: number;
}

/** Default of `BotOptions.maxQueuedReplies`. */
export const DEFAULT_MAX_QUEUED_REPLIES = 256;

/** Most arguments one `/follow` or `/unfollow` takes. */
export const MAX_FOLLOW_ARGS = 25;

/** Answer of `/help` (and part of `/start`): what the bot does and its commands. */
export const HELP_TEXT = [
  "Ballast stablecoin alerts: depeg incidents, grade changes and large freezes of the coins you follow.",
  "",
  "/follow <coin|preset> … — follow coins by id (usdt-tether) or symbol (USDT), or a preset",
  "/unfollow <coin|preset> … — stop following them",
  "/list — what this chat follows",
  `/presets — the presets: ${PRESETS.map((p) => p.name).join(", ")}`,
  "/stop — pause all alerts (your follows are kept; /start resumes)",
  "/help — this text",
].join("\n");

/** A grammY bot and the scope of each update it handles (set by the caller before `handleUpdate`). */
export interface ChatBot {
  bot: Bot;
  /** Handles one update under `scope` (its replies are queued, not sent). @throws BotError wrapping what a handler threw (store failures). */
  handle(update: Update, scope: UpdateScope): Promise<void>;
  /** Resolves once every queued reply was sent or given up. */
  repliesSent(): Promise<void>;
}

/** What the command handlers use: the state store, the update's scope and chat, and the reply queue. */
interface BotKit {
  store: TelegramStore;
  /** The scope `handle` set for this update. @throws Error when there is none. */
  scopeOf(ctx: Context): UpdateScope;
  /** The update's chat. @throws Error when there is none. */
  chatOf(ctx: Context): NonNullable<Context["chat"]>;
  /** The update's chat id as stored (decimal string). */
  chatId(ctx: Context): string;
  /** Queues a reply (see `replyQueue`). */
  say(ctx: Context, text: string): Promise<void>;
}

/**
 * The reply queue of a bot: `say` queues a reply (the update's handling never waits on the Bot API;
 * dropped with a log line when `maxQueuedReplies` wait), sent one at a time through the Bot API; a
 * refusal is logged, never thrown (403: the chat blocked the bot → inactive, `blocked`). `idle`
 * resolves once every queued reply was sent or given up.
 */
function replyQueue(
  opts: BotOptions,
  kit: Pick<BotKit, "store" | "scopeOf" | "chatId">,
): { say: BotKit["say"]; idle(): Promise<void> } {
  const replies = new SerialQueue(opts.maxQueuedReplies ?? DEFAULT_MAX_QUEUED_REPLIES, "reply");
  /** Sends a reply through the Bot API in the background; a refusal is logged (403: the chat blocked the bot → inactive), never thrown. */
  const send = async (ctx: Context, text: string) => {
    try {
      await ctx.reply(text, { link_preview_options: { is_disabled: true } });
    } catch (err) {
      if (err instanceof GrammyError && err.error_code === 403 && ctx.chat)
        await kit.store.deactivate(kit.chatId(ctx), "blocked", kit.scopeOf(ctx).now);
      apiLog("warn", "telegram", "reply not delivered", {
        chatId: ctx.chat?.id ?? null,
        error: errorMessage(err),
        code: err instanceof GrammyError ? err.error_code : null,
      });
    }
  };
  return {
    say: async (ctx, text) => {
      if (!replies.push(() => send(ctx, text)))
        apiLog("warn", "telegram", "reply dropped: reply queue full (the Bot API is slow or unreachable)", {
          chatId: ctx.chat?.id ?? null,
          updateId: ctx.update.update_id,
        });
    },
    idle: () => replies.idle(),
  };
}

/** Arguments of a command: its text split on spaces and commas, empty ones dropped. */
const commandArgs = (ctx: Context) =>
  String(ctx.match ?? "")
    .split(/[\s,]+/)
    .map((a) => a.trim())
    .filter(Boolean);
/** `SYMBOL (id)` of a coin in replies. */
const coinLabel = (c: CoinRef) => `${c.symbol} (${c.id})`;
/** `name: SYM, SYM…` of a preset in replies (`name: every coin` for `all`). */
const presetLabel = (p: Preset, catalog: CoinCatalog) =>
  p.coins === "*" ? `${p.name}: every coin` : `${p.name}: ${p.coins.map((id) => catalog.symbolOf(id)).join(", ")}`;

/** `/start`: opts the chat in and answers a welcome (new, back, or already on), what it follows, and the help text. */
async function onStart(ctx: CommandContext<Context>, kit: BotKit): Promise<void> {
  const { store } = kit;
  const { now } = kit.scopeOf(ctx);
  const outcome = await store.activate(kit.chatId(ctx), ctx.chat.type, now);
  const f = await store.follows(kit.chatId(ctx));
  const intro =
    outcome === "reactivated"
      ? "Welcome back: alerts are on again."
      : outcome === "new"
        ? "Welcome to Ballast."
        : "Alerts are on.";
  const following =
    f.coins.length + f.presets.length
      ? `\nYou follow ${f.coins.length} coin(s) and ${f.presets.length} preset(s); /list shows them.`
      : "\nTry /follow majors to start.";
  await kit.say(ctx, `${intro}${following}\n\n${HELP_TEXT}`);
}

/** `/list` (`/following`): whether alerts are off, then the followed presets (with their coins) and coins. */
async function onList(ctx: Context, kit: BotKit): Promise<void> {
  const { store } = kit;
  const { catalog } = kit.scopeOf(ctx);
  const [chat, f] = [await store.chat(kit.chatId(ctx)), await store.follows(kit.chatId(ctx))];
  if (f.coins.length + f.presets.length === 0)
    return kit.say(ctx, "This chat follows nothing yet. Try /follow majors or /follow USDT.");
  const lines = [
    ...(chat && !chat.active ? ["Alerts are off (/start turns them on)."] : []),
    ...(f.presets.length
      ? [
          "Presets:",
          ...f.presets.map((name) => {
            const p = PRESETS.find((x) => x.name === name);
            return `• ${p ? presetLabel(p, catalog) : name}`;
          }),
        ]
      : []),
    ...(f.coins.length
      ? [
          "Coins:",
          ...f.coins.map((id) => {
            const coin = catalog.get(id);
            return `• ${coin ? coinLabel(coin) : id}`;
          }),
        ]
      : []),
  ];
  return kit.say(ctx, lines.join("\n"));
}

/** `/follow <coin|preset> …` (at most MAX_FOLLOW_ARGS): follows what resolves (opting the chat in), names what does not. */
async function onFollow(ctx: Context, kit: BotKit): Promise<void> {
  const { store } = kit;
  const { catalog, now } = kit.scopeOf(ctx);
  const list = commandArgs(ctx);
  if (list.length === 0) return kit.say(ctx, "Usage: /follow <coin|preset> …, e.g. /follow USDT usdc-circle majors");
  if (list.length > MAX_FOLLOW_ARGS) return kit.say(ctx, `At most ${MAX_FOLLOW_ARGS} coins or presets at once.`);
  const coins: CoinRef[] = [];
  const presets: Preset[] = [];
  const problems: string[] = [];
  for (const arg of list) {
    const t = resolveTarget(arg, catalog);
    if (t.kind === "coin") coins.push(t.coin);
    else if (t.kind === "preset") presets.push(t.preset);
    else if (t.kind === "ambiguous")
      problems.push(`${arg} is ambiguous: ${t.candidates.map((c) => c.id).join(", ")} (use the id)`);
    else
      problems.push(
        catalog.size === 0
          ? `${arg}: the coin list is not available yet, try again later`
          : `${arg}: unknown coin or preset`,
      );
  }
  if (coins.length + presets.length > 0) {
    await store.activate(kit.chatId(ctx), kit.chatOf(ctx).type, now);
    await store.follow(
      kit.chatId(ctx),
      "coin",
      coins.map((c) => c.id),
      now,
    );
    await store.follow(
      kit.chatId(ctx),
      "preset",
      presets.map((p) => p.name),
      now,
    );
  }
  const done = [...presets.map((p) => `preset ${p.name}`), ...coins.map(coinLabel)];
  await kit.say(ctx, [...(done.length ? [`Following ${done.join(", ")}.`] : []), ...problems].join("\n"));
}

/**
 * `/unfollow <coin|preset> …` (at most MAX_FOLLOW_ARGS): unfollows what resolves, a followed id the
 * list no longer carries, or the one followed candidate of an ambiguous symbol; names what does not.
 */
async function onUnfollow(ctx: Context, kit: BotKit): Promise<void> {
  const { store } = kit;
  const { catalog } = kit.scopeOf(ctx);
  const list = commandArgs(ctx);
  if (list.length === 0) return kit.say(ctx, "Usage: /unfollow <coin|preset> …");
  if (list.length > MAX_FOLLOW_ARGS) return kit.say(ctx, `At most ${MAX_FOLLOW_ARGS} coins or presets at once.`);
  const followed = await store.follows(kit.chatId(ctx));
  const coins: string[] = [];
  const presets: string[] = [];
  const problems: string[] = [];
  for (const arg of list) {
    const t = resolveTarget(arg, catalog);
    if (t.kind === "coin") coins.push(t.coin.id);
    else if (t.kind === "preset") presets.push(t.preset.name);
    else if (followed.coins.includes(arg.toLowerCase()))
      coins.push(arg.toLowerCase()); // a coin the list no longer carries
    else if (t.kind === "ambiguous") {
      const mine = t.candidates.filter((c) => followed.coins.includes(c.id));
      if (mine.length === 1) coins.push(mine[0].id);
      else problems.push(`${arg} is ambiguous: ${t.candidates.map((c) => c.id).join(", ")} (use the id)`);
    } else problems.push(`${arg}: unknown coin or preset`);
  }
  const removed =
    (await store.unfollow(kit.chatId(ctx), "coin", coins)) + (await store.unfollow(kit.chatId(ctx), "preset", presets));
  const names = [
    ...presets.map((p) => `preset ${p}`),
    ...coins.map((id) => {
      const coin = catalog.get(id);
      return coin ? coinLabel(coin) : id;
    }),
  ];
  await kit.say(
    ctx,
    [
      ...(names.length
        ? [removed ? `Unfollowed ${names.join(", ")}.` : `This chat did not follow ${names.join(", ")}.`]
        : []),
      ...problems,
    ].join("\n"),
  );
}

/** Registers the commands, the membership updates and the private-chat fallback (see the module comment) on `bot`. */
function registerHandlers(bot: Bot, kit: BotKit): void {
  const { store, say } = kit;
  bot.command("start", (ctx) => onStart(ctx, kit));

  bot.command("stop", async (ctx) => {
    const stopped = await store.deactivate(kit.chatId(ctx), "stopped", kit.scopeOf(ctx).now);
    await say(
      ctx,
      stopped
        ? "Alerts stopped. Your follows are kept; send /start to resume."
        : "Alerts are already off. Send /start to turn them on.",
    );
  });

  bot.command("help", (ctx) => say(ctx, HELP_TEXT));

  bot.command("presets", (ctx) =>
    say(
      ctx,
      [
        "Presets (follow one with /follow <name>):",
        ...PRESETS.map((p) => `• ${presetLabel(p, kit.scopeOf(ctx).catalog)}`),
      ].join("\n"),
    ),
  );

  bot.command(["list", "following"], (ctx) => onList(ctx, kit));
  bot.command("follow", (ctx) => onFollow(ctx, kit));
  bot.command("unfollow", (ctx) => onUnfollow(ctx, kit));

  bot.on("my_chat_member", async (ctx) => {
    const { now } = kit.scopeOf(ctx);
    const status = ctx.myChatMember.new_chat_member.status;
    if (status === "kicked" || status === "left") await store.deactivate(kit.chatId(ctx), "blocked", now);
    else if (status === "member" || status === "administrator")
      await store.activate(kit.chatId(ctx), ctx.chat.type, now);
  });

  // Anything else in a private chat gets a pointer to /help; groups are left alone.
  bot.chatType("private").on("message", (ctx) => say(ctx, "Send /help to see what I can do."));
}

/**
 * Builds the bot with its commands (see the module comment). The caller must `await bot.init()`
 * when no `botInfo` was given (the service does it once, lazily).
 */
export function createBot(opts: BotOptions): ChatBot {
  const bot = new Bot(opts.token, {
    ...(opts.botInfo ? { botInfo: opts.botInfo } : {}),
    client: { ...(opts.apiRoot ? { apiRoot: opts.apiRoot } : {}), timeoutSeconds: opts.timeoutSeconds ?? 10 },
  });
  const scopes = new WeakMap<object, UpdateScope>();
  const scopeOf = (ctx: Context): UpdateScope => {
    const s = scopes.get(ctx.update);
    if (!s) throw new Error("telegram bot: update handled without a scope");
    return s;
  };
  const chatOf = (ctx: Context) => {
    if (!ctx.chat) throw new Error("telegram bot: command handled without a chat");
    return ctx.chat;
  };
  const chatId = (ctx: Context) => String(chatOf(ctx).id);
  const replies = replyQueue(opts, { store: opts.store, scopeOf, chatId });
  registerHandlers(bot, { store: opts.store, scopeOf, chatOf, chatId, say: replies.say });
  return {
    bot,
    async handle(update, scope) {
      scopes.set(update, scope);
      await bot.handleUpdate(update);
    },
    repliesSent: () => replies.idle(),
  };
}
