import type { TelegramSummary } from "../lib/telegram/service.ts";
import { check } from "./causes.ts";
import type { HealthClock } from "./format.ts";
import type { Check } from "./types.ts";

/**
 * The messaging bot: section `telegramSummary` (its summary with `lastDispatchAt` shifted onto the
 * clock of `timestamp`; null when no bot is configured or its store did not answer). A note (no
 * effect on status) says which: not configured (the bot routes answer 503) or state unavailable.
 */
export function telegramCheck(
  telegram: TelegramSummary | "unavailable" | undefined,
  clock: HealthClock,
): Check<TelegramSummary | null> {
  if (typeof telegram === "object")
    return check({ ...telegram, lastDispatchAt: clock.onClock(telegram.lastDispatchAt) });
  return check(null, {
    notes: [
      telegram === undefined
        ? "messaging bot not configured (no effect on status): TELEGRAM_BOT_TOKEN is unset, so /api/telegram-pulse, /api/telegram-mini-app/session and /api/telegram-mini-app/mutate answer 503 and no chat alerts are sent."
        : "messaging bot state unavailable (no effect on status): its state store did not answer; telegramSummary is null until it does.",
    ],
  });
}
