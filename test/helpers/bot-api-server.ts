import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { UserFromGetMe } from "grammy/types";

/** One Bot API call the local server received: method name, bot token from the path, parsed parameters. */
export interface BotApiCall {
  token: string;
  method: string;
  params: Record<string, unknown>;
  /** Unix ms when it arrived. */
  at: number;
}

/** What the local server answers a call: Bot API `{ ok, result }`, or an error `{ ok: false, error_code, description, parameters? }`. */
export type BotApiAnswer =
  | { ok: true; result: unknown }
  | { ok: false; error_code: number; description: string; parameters?: { retry_after?: number } };

/** A local HTTP server speaking the Telegram Bot API wire format (`POST /bot<token>/<method>`), for tests. */
export interface BotApiServer {
  /** `apiRoot` to give grammy (`new Bot(token, { client: { apiRoot } })`). */
  apiRoot: string;
  /** Every call received, in order. */
  calls: BotApiCall[];
  /** Calls of one method (e.g. `sendMessage`). */
  callsOf(method: string): BotApiCall[];
  /**
   * Overrides the answer of the next calls of `method`: `answers` are used one per call, in order,
   * then the default answer again.
   */
  failNext(method: string, ...answers: BotApiAnswer[]): void;
  /** While true, calls are recorded and not answered (a Bot API that accepts and hangs); set false, the held calls are answered. */
  hang: boolean;
  /** Calls received and not answered whose connection is still open. */
  hanging(): number;
  close(): Promise<void>;
}

/** Bot identity the server answers `getMe` with (every field grammY's `UserFromGetMe` requires, so it also serves as `botInfo`). */
export const TEST_BOT_INFO: UserFromGetMe = {
  id: 7_000_000_001,
  is_bot: true,
  first_name: "Ballast test bot",
  username: "ballast_test_bot",
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  can_connect_to_business: false,
  has_main_web_app: false,
  has_topics_enabled: false,
  allows_users_to_create_topics: false,
  can_manage_bots: false,
  supports_join_request_queries: false,
};

async function readParams(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const type = req.headers["content-type"] ?? "";
  if (!text) return {};
  if (type.includes("application/json")) return JSON.parse(text) as Record<string, unknown>;
  if (type.includes("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(text));
  throw new Error(`bot-api-server: unsupported content type ${type}`);
}

let messageId = 1000;

/** The default successful result of a method (the shapes grammy reads). */
function defaultResult(method: string, params: Record<string, unknown>): unknown {
  switch (method) {
    case "getMe":
      return TEST_BOT_INFO;
    case "sendMessage":
      return {
        message_id: ++messageId,
        date: Math.floor(Date.now() / 1000),
        text: params.text,
        chat: { id: Number(params.chat_id), type: Number(params.chat_id) < 0 ? "group" : "private" },
        from: {
          id: TEST_BOT_INFO.id,
          is_bot: true,
          first_name: TEST_BOT_INFO.first_name,
          username: TEST_BOT_INFO.username,
        },
      };
    default:
      return true;
  }
}

/**
 * Starts a Bot API server on a free loopback port: it records every call and answers the Bot API's
 * JSON envelope (`getMe` the test bot, `sendMessage` a message, anything else `true`), unless
 * `failNext` queued another answer (an error with `error_code` 429 and `retry_after`, a 403 for a
 * chat that blocked the bot, …). Never reaches the internet. `port` 0 (default): a free port.
 */
export async function startBotApiServer(port = 0): Promise<BotApiServer> {
  const calls: BotApiCall[] = [];
  const queued = new Map<string, BotApiAnswer[]>();
  const state = { hang: false, hanging: 0 };
  /** Answers of hung calls, sent when `hang` turns false. */
  let held: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec((req.url ?? "").split("?")[0]);
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    if (!m || req.method !== "POST") return send(404, { ok: false, error_code: 404, description: "Not Found" });
    readParams(req).then(
      (params) => {
        const [, token, method] = m;
        calls.push({ token, method, params, at: Date.now() });
        const answer = () => {
          const a = queued.get(method)?.shift() ?? { ok: true, result: defaultResult(method, params) };
          send(a.ok ? 200 : a.error_code, a);
        };
        if (!state.hang) return answer();
        state.hanging++;
        res.on("close", () => state.hanging--);
        held.push(() => {
          if (!res.writableEnded && !res.destroyed) answer();
        });
      },
      (err: unknown) => send(400, { ok: false, error_code: 400, description: `Bad Request: ${String(err)}` }),
    );
  });
  // Idle keep-alive sockets stay open for the whole test file (grammY reuses them): with Node's default
  // 5 s, a socket the server closes just as the client reuses it fails that send ("Network request
  // failed"), which a busy machine made happen between tests.
  server.keepAliveTimeout = 600_000;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    apiRoot: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    get hang() {
      return state.hang;
    },
    set hang(v: boolean) {
      state.hang = v;
      if (v) return;
      for (const answer of held) answer();
      held = [];
    },
    hanging: () => state.hanging,
    callsOf: (method) => calls.filter((c) => c.method === method),
    failNext: (method, ...answers) => {
      queued.set(method, [...(queued.get(method) ?? []), ...answers]);
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
