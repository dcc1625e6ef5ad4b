import type { ServingBuild } from "../published.ts";
import type { AdoptionSnapshot } from "./store.ts";
import type { MiniAppMutateBody, MiniAppMutation, MiniAppSessionBody, MiniAppState } from "./mini-app.ts";
import type { TelegramPulse } from "./pulse.ts";

/** A Telegram Update as the webhook received it (JSON object with a numeric `update_id`; grammY reads the rest). */
export type TelegramUpdate = { update_id: number } & Record<string, unknown>;

/**
 * The messaging bot (Telegram) as the routes see it: the webhook's update handler, the mini-app's
 * session and mutation, the website-internal adoption mutation, the adoption pulse (spec 2.16) and
 * the health summary (spec 2.8 `telegramSummary`). The server builds one (api/lib/telegram/) when a
 * bot token is configured; routes answer 404/503 without it.
 */
export interface TelegramService {
  /**
   * Handles one inbound update (the webhook route checked the secret): commands and chat-member
   * changes, replies queued for the Bot API (never awaited). A failing reply or handler bug is logged,
   * not thrown. While the bot's identity is unknown (Bot API unreachable) the update is queued and
   * handled later, and this resolves within about 2 s.
   * @throws HttpError 503 (`Retry-After: 60`) when the state store fails: the webhook answers 503 and
   *   Telegram retries the update later.
   */
  handleUpdate(update: TelegramUpdate, scope: RequestScope): Promise<void>;
  /**
   * Mini-app session: verifies the init data (HMAC, `auth_date` at most the session max age old,
   * user payload), records the launch, answers the user's private-chat follows. Nothing is written
   * before the init data verified, but the day's `denied` counter on a refusal.
   * @throws HttpError 401 (`reason` `init_data_invalid` / `init_data_expired`), 503 store unavailable.
   */
  miniAppSession(body: MiniAppSessionBody, scope: RequestScope): Promise<MiniAppState>;
  /**
   * Mini-app mutation: verifies the init data (mutation max age), claims `(init data hash,
   * requestId)` and follows / unfollows one coin or preset for the user's private chat.
   * @throws HttpError 401 as for the session; 404 unknown stablecoin id or preset; 409
   *   `init_data_replayed` when the pair was used before (counted as a replay claim, nothing changes);
   *   503 store unavailable or no coin list published yet (coin mutations).
   */
  miniAppMutate(body: MiniAppMutateBody, scope: RequestScope): Promise<MiniAppMutation>;
  /** Counts one refused mini-app call of the day (the website-internal lane's 403). Never throws. */
  recordDenied(wallNow: number): Promise<void>;
  /**
   * The website-internal adoption mutation: stores today's lifecycle snapshot (replacing an earlier
   * one of the same UTC day) and prunes expired replay claims and old history. @throws HttpError 503 store unavailable.
   */
  recordAdoption(scope: RequestScope): Promise<AdoptionSnapshot>;
  /** The adoption pulse (spec 2.16). @throws HttpError 503 store unavailable. */
  pulse(scope: RequestScope): Promise<TelegramPulse>;
  /** Health's `telegramSummary` (spec 2.8). @throws TelegramStoreError when the store fails (health reports it unavailable). */
  summary(nowSec: number): Promise<TelegramSummary>;
  /** Who follows which coins (the alert dispatcher reads it). */
  readonly followers: FollowerLookup;
}

/** What the routes hand the service: the serving build (its stablecoin list is the coin catalog) and the wall clock (Unix s). */
export interface RequestScope {
  build: ServingBuild | null;
  wallNow: number;
}

/** Spec 2.8 `telegramSummary`. Times are Unix seconds. */
export interface TelegramSummary {
  totalChats: number;
  pendingDeliveries: number | null;
  pendingDeliveryLifecycleStatus: "available" | "unknown";
  pendingDeliveryBacklog: number;
  lastDispatchAt: number | null;
  lastDispatchStatus: string | null;
  safetyAlertSourceState: "ok" | "missing" | "corrupt" | "stale" | "wrong-generation" | null;
  safetyAlertSourceAgeSeconds: number | null;
  safetyAlertsSuppressed: boolean;
  safetyAlertSourceGeneration: string | null;
}

/** What the alert dispatcher (api/lib/telegram/dispatch.ts) reports into `telegramSummary`: every field but `totalChats`. */
export type DispatchStatus = Omit<TelegramSummary, "totalChats">;

/** DispatchStatus while no dispatcher is wired or its state cannot be read: lifecycle `unknown`, nothing counted. */
export const UNKNOWN_DISPATCH_STATUS: Readonly<DispatchStatus> = Object.freeze({
  pendingDeliveries: null,
  pendingDeliveryLifecycleStatus: "unknown",
  pendingDeliveryBacklog: 0,
  lastDispatchAt: null,
  lastDispatchStatus: null,
  safetyAlertSourceState: null,
  safetyAlertSourceAgeSeconds: null,
  safetyAlertsSuppressed: false,
  safetyAlertSourceGeneration: null,
});

/**
 * Who follows which coins: explicit follows plus coins implied by followed presets, active chats
 * only (a chat that stopped the bot or blocked it follows nothing). The bot's store implements it;
 * the alert dispatcher reads it.
 */
export interface FollowerLookup {
  /** Coin id → chat ids (decimal strings; Telegram chat ids exceed 32 bits) following it, for each of `coinIds` with at least one follower. */
  followersOf(coinIds: readonly string[]): Promise<Map<string, string[]>>;
}

/** The alert dispatcher as the bot service reads it (optional): its state for health and the pulse. */
export interface DispatchSource {
  /** Current dispatch state. A rejection is reported as unknown (nulls), never thrown on. */
  status(): Promise<DispatchStatus>;
}
