/**
 * The messaging bot (Telegram) as the routes see it: the webhook's update handler, the mini-app's
 * session and mutation, the website-internal adoption mutation, the adoption pulse (spec 2.16) and
 * the health summary (spec 2.8 `telegramSummary`). The server builds one (api/lib/telegram/) when a
 * bot token is configured; routes answer 404/503 without it.
 */
export interface TelegramService {
  /** Handles one inbound update (the webhook route checked the secret). */
  handleUpdate(update: unknown): Promise<void>;
  /** Health's `telegramSummary` (spec 2.8). */
  summary(nowSec: number): Promise<TelegramSummary>;
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

/**
 * Who follows which coins: explicit follows plus coins implied by followed presets, active chats
 * only (a chat that stopped the bot or blocked it follows nothing). The bot's store implements it;
 * the alert dispatcher reads it.
 */
export interface FollowerLookup {
  /** Coin id → chat ids (decimal strings; Telegram chat ids exceed 32 bits) following it, for each of `coinIds` with at least one follower. */
  followersOf(coinIds: readonly string[]): Promise<Map<string, string[]>>;
}
