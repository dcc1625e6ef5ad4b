import { describe, expect, it } from "vitest";
import type { SqlClient } from "./key-store/schema.ts";
import { MaintenanceGate } from "./maintenance.ts";

/** A state store holding one stored switch (`value` JSON, or no row), counting reads. */
function store(value: { enabled: boolean } | null) {
  const calls = { reads: 0 };
  const sql: SqlClient = {
    query: async <T>(text: string) => {
      if (text.startsWith("select")) calls.reads++;
      const rows =
        text.startsWith("select") && value ? [{ value: JSON.stringify(value), updated_at: 1, updated_by: "op" }] : [];
      return { rows: rows as T[] };
    },
    close: async () => {},
  };
  return { sql, calls };
}

describe("MaintenanceGate.knownOff (the Node fast path's check)", () => {
  it("is true only for a fresh copy that says off", async () => {
    let now = 1_000_000;
    const off = store({ enabled: false });
    const gate = new MaintenanceGate(off.sql, { nowMs: () => now });
    expect(gate.knownOff()).toBe(false); // never read: too old to trust; starts the read
    await gate.refresh();
    expect(gate.knownOff()).toBe(true);
    now += 5_000; // 5 × refreshMs old: not trusted, a re-read starts
    expect(gate.knownOff()).toBe(false);
    await gate.refresh();
    expect(gate.knownOff()).toBe(true);
    expect(off.calls.reads).toBeGreaterThanOrEqual(2);
  });

  it("is false while the stored switch is on, and when the environment forces it on", async () => {
    const on = new MaintenanceGate(store({ enabled: true }).sql);
    await on.refresh();
    expect(on.knownOff()).toBe(false);
    const forced = new MaintenanceGate(store({ enabled: false }).sql, { forced: true });
    await forced.refresh();
    expect(forced.knownOff()).toBe(false);
    expect(new MaintenanceGate(null, { forced: true }).knownOff()).toBe(false);
  });

  it("without a state store, is off unless forced", () => {
    expect(new MaintenanceGate(null).knownOff()).toBe(true);
  });
});
