import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { HttpError } from "../lib/http-error.ts";
import type { MaintenanceGate } from "../lib/maintenance.ts";
import { Cors } from "./cors.ts";
import { installErrorHandlers } from "./errors.ts";
import { maintenanceMode } from "./maintenance.ts";

describe("maintenance mode middleware", () => {
  it("while the gate is on every /api request but preflights answers the gate's 503; static files and preflights pass", async () => {
    let on = true;
    const gate = {
      check: async () => {
        if (on) throw new HttpError(503, "maintenance", { "Retry-After": "300" }, { message: "back soon" });
      },
    } as unknown as MaintenanceGate;
    const app = new Hono();
    installErrorHandlers(app, new Cors([]));
    app.use("/api/*", maintenanceMode(gate));
    app.get("/api/x", (c) => c.json({ ok: true }));
    app.options("/api/x", (c) => c.body(null, 204));
    app.get("/datasets/x", (c) => c.text("file"));
    const r = await app.request("/api/x");
    expect([r.status, r.headers.get("retry-after"), await r.json()]).toEqual([
      503,
      "300",
      { error: "maintenance", message: "back soon" },
    ]);
    expect((await app.request("/api/x", { method: "OPTIONS" })).status).toBe(204);
    expect((await app.request("/datasets/x")).status).toBe(200);
    on = false;
    expect((await app.request("/api/x")).status).toBe(200);
  });
});
