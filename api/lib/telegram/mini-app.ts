import { z } from "zod";

/**
 * Request and answer shapes of the mini-app routes (`POST /api/telegram-mini-app/session` and
 * `/mutate`). Bodies are JSON objects; unknown fields are refused (400 naming them).
 */

/** Init data as Telegram hands it to the mini-app (`Telegram.WebApp.initData`, a query string). */
const InitData = z
  .string()
  .min(1)
  .max(8192)
  .describe("`Telegram.WebApp.initData` exactly as received (a query string with `hash` and `auth_date`)");

/** Body of `/session`: `{ initData }`. */
export const MiniAppSessionBodySchema = z.strictObject({ initData: InitData });
export type MiniAppSessionBody = z.infer<typeof MiniAppSessionBodySchema>;

/**
 * Body of `/mutate`: `{ initData, requestId, action, coin | preset }`. `requestId` is chosen by the
 * mini-app per mutation (8-64 of `A-Z a-z 0-9 _ -`, e.g. a UUID): the same `(initData, requestId)`
 * twice is a replay claim (409). Exactly one of `coin` (stablecoin id, e.g. `usdt-tether`) or
 * `preset` (`majors`, `all`).
 */
export const MiniAppMutateBodySchema = z
  .strictObject({
    initData: InitData,
    requestId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{8,64}$/, "8-64 characters of A-Z, a-z, 0-9, _ or -")
      .describe(
        "Client-chosen id of this mutation (a UUID); reusing it with the same initData is refused as a replay (409)",
      ),
    action: z.enum(["follow", "unfollow"]),
    coin: z.string().min(1).max(100).optional().describe("Stablecoin id (`usdt-tether`)"),
    preset: z.string().min(1).max(40).optional().describe("Preset name (`majors`, `all`)"),
  })
  .refine((b) => (b.coin === undefined) !== (b.preset === undefined), {
    message: "exactly one of coin or preset is required",
    path: ["coin"],
  });
export type MiniAppMutateBody = z.infer<typeof MiniAppMutateBodySchema>;

/** A preset as the mini-app lists it (`coins` `"*"`: every coin). */
export interface MiniAppPreset {
  name: string;
  description: string;
  coins: string[] | "*";
}

/**
 * What both routes answer: the user's private chat (chat id = Telegram user id, decimal string),
 * whether alerts reach it, what it follows, the presets on offer, and until when (Unix s) the init
 * data is accepted for mutations.
 */
export interface MiniAppState {
  chatId: string;
  /** False before the first follow or after /stop or a block; `inactiveReason` says which (null: never opted in, or active). */
  active: boolean;
  inactiveReason: "stopped" | "blocked" | null;
  coins: { id: string; symbol: string }[];
  presets: string[];
  availablePresets: MiniAppPreset[];
  mutateUntil: number;
}

/** Answer of `/mutate`: the state after it, what was asked and whether it changed anything. */
export interface MiniAppMutation extends MiniAppState {
  action: "follow" | "unfollow";
  target: { coin: string } | { preset: string };
  changed: boolean;
}
