import { describe, expect, it } from "vitest";
import type { TelegramSummary } from "../lib/telegram/service.ts";
import { healthClock } from "./format.ts";
import { telegramCheck } from "./telegram.ts";

describe("messaging bot check", () => {
  it("not configured: null summary and a note naming the routes answering 503", () => {
    const c = telegramCheck(undefined, healthClock(0));
    expect(c.section).toBeNull();
    expect(c.notes[0]).toMatch(/^messaging bot not configured \(no effect on status\).*\/api\/telegram-pulse/);
  });

  it("store unavailable: null summary and a note; configured: the summary with lastDispatchAt on the clock of timestamp", () => {
    expect(telegramCheck("unavailable", healthClock(0)).notes[0]).toMatch(/^messaging bot state unavailable/);
    const summary = { lastDispatchAt: 2000 } as unknown as TelegramSummary;
    const c = telegramCheck(summary, healthClock(1000, 2500));
    expect(c.section?.lastDispatchAt).toBe(500);
    expect([c.causes, c.notes]).toEqual([[], []]);
  });
});
