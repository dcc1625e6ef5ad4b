import type { MiddlewareHandler } from "hono";
import type { MaintenanceGate } from "../lib/maintenance.ts";

/**
 * Maintenance mode on the public lane (issue 19 item 6): while the gate is on, every `/api/*` request
 * but preflights answers 503 `{ error: "maintenance", message }` with `Retry-After: 300` before any key
 * is read (health too, as the reference does); static files keep serving (mount it on `/api/*`).
 */
export function maintenanceMode(gate: MaintenanceGate): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== "OPTIONS") await gate.check();
    await next();
  };
}
