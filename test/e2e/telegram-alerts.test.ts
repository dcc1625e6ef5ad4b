/**
 * Chat alerts end to end, through the server as `make run` starts it (api/server.ts with
 * TELEGRAM_BOT_TOKEN): three chats follow coins over the webhook, a build as of 2023-03-10 is the
 * dispatcher's baseline, then a build as of 2023-03-12 (recorded data: the USDC/SVB depeg opened
 * 2023-03-11) is published and its new depeg incidents reach exactly the chats following those coins,
 * one message per chat and incident, on a local Bot API server. State in a Postgres schema of this file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../api/server.ts";
import { runBuild } from "../../build/run-build.ts";
import { FsSink } from "../../build/sinks/fs.ts";
import { type BotApiServer, startBotApiServer } from "../helpers/bot-api-server.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

const TOKEN = "7000000001:AAe2e-token-for-ballast-alert-tests";
const SECRET = "webhook-secret-for-alert-e2e";
let dir: string;
let bot: BotApiServer;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let server: RunningServer;
let base: string;

const build = (day: string) =>
  runBuild({
    asOf: Date.parse(`${day}T00:00:00Z`) / 1000,
    captureDir: CAPTURE_DIR,
    sink: new FsSink(dir),
    warehousePath: null,
  });

let updateId = 1;
async function say(chatId: number, text: string): Promise<void> {
  const res = await fetch(`${base}/api/telegram-webhook`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET },
    body: JSON.stringify({
      update_id: updateId++,
      message: {
        message_id: updateId,
        date: Math.floor(Date.now() / 1000),
        text,
        entities: [{ type: "bot_command", offset: 0, length: text.split(" ")[0].length }],
        from: { id: chatId, is_bot: false, first_name: "Test" },
        chat: { id: chatId, type: "private", first_name: "Test" },
      },
    }),
  });
  expect([res.status, await res.text()]).toEqual([200, "ok"]);
}

async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 300_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const summary = async () =>
  (
    (await (await fetch(`${base}/api/health`)).json()) as {
      telegramSummary: {
        lastDispatchStatus: string | null;
        pendingDeliveries: number | null;
        totalChats: number;
      } | null;
    }
  ).telegramSummary;

beforeAll(async () => {
  process.env.BALLAST_LOG = "silent";
  dir = mkdtempSync(join(tmpdir(), "ballast-alerts-e2e-"));
  bot = await startBotApiServer();
  schema = await createTestSchema("alerts_e2e");
  await build("2023-03-10");
  server = await startServer({
    PORT: 0,
    HOST: "127.0.0.1",
    BALLAST_DATA_DIR: dir,
    CLOCK: "auto",
    DATABASE_URL: schema.url,
    API_KEY_PEPPER: "pepper-for-alert-e2e-0123456789",
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_API_ROOT: bot.apiRoot,
    TELEGRAM_WEBHOOK_SECRET: SECRET,
    TELEGRAM_ALERTS_INTERVAL_SEC: 1,
    STATUS_RECORD_INTERVAL_SEC: 0,
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.close();
  await bot?.close();
  await schema?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("alert dispatch through the server", () => {
  it("a new depeg incident in a build produces one message per following chat, and none to other chats", async () => {
    await say(101, "/follow USDC");
    await say(102, "/follow majors");
    await say(103, "/follow USDT");
    expect((await summary())?.totalChats).toBe(3);
    expect(
      await until("the baseline", async () =>
        (await summary())?.lastDispatchStatus === "baseline" ? true : undefined,
      ),
    ).toBe(true);
    const before = bot.callsOf("sendMessage").length;
    expect(bot.callsOf("sendMessage").every((c) => !String(c.params.text).includes(" depeg: "))).toBe(true);

    await build("2023-03-12");
    const alerts = await until("the depeg alerts", async () => {
      const sent = bot
        .callsOf("sendMessage")
        .slice(before)
        .filter((c) => String(c.params.text).includes(" depeg: "));
      const s = await summary();
      return sent.length >= 3 && s?.pendingDeliveries === 0 ? sent : undefined;
    });
    const byChat = (chat: number) =>
      alerts
        .filter((c) => Number(c.params.chat_id) === chat)
        .map((c) => String(c.params.text).split(" depeg: ")[0])
        .sort();
    expect(byChat(101)).toEqual(["USDC"]);
    expect(byChat(102)).toEqual(["DAI", "USDC"]); // majors: the new USDC and DAI incidents (FRAX is not a major)
    expect(byChat(103)).toEqual([]);
    expect(alerts).toHaveLength(3);
    expect(alerts.every((c) => c.token === TOKEN)).toBe(true);
    expect((await summary())?.lastDispatchStatus).toBe("ok");

    // the next runs send nothing again
    await new Promise((r) => setTimeout(r, 2500));
    expect(
      bot
        .callsOf("sendMessage")
        .slice(before)
        .filter((c) => String(c.params.text).includes(" depeg: ")),
    ).toHaveLength(3);
  });
});
