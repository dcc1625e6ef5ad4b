import type { Hono } from "hono";
import type { LaneAuth } from "../lib/auth.ts";
import type { ProxyTrust } from "../lib/client-address.ts";
import { HttpError } from "../lib/http-error.ts";
import type { RouteDecl } from "../routes/route.ts";
import { authRequest } from "./lane.ts";

/**
 * Mounts what answers requests the route table does not serve, after it: unknown share images 404
 * without a key (the `/api/og/*` family is exempt, spec 5.2); 405 with `Allow` from the table on a
 * declared path (operator routes aside); on other `/api/*` paths, admin families (`adminFamilies`
 * and the operator routes' paths) 404 before key authentication (spec 5.2), POST 405 `Allow: GET`,
 * other non-GET/HEAD methods 405 `Allow: GET, POST` (spec 4.4), and GET/HEAD the key lane first
 * (401 without a key), then 404.
 */
export function mountFallbacks(
  app: Hono,
  deps: { routes: readonly RouteDecl[]; adminFamilies: readonly string[]; auth: LaneAuth; trust: ProxyTrust },
): void {
  app.on(["GET", "HEAD"], "/api/og/*", () => {
    throw new HttpError(404, "Not found");
  });
  const methodsByPath = new Map<string, Set<string>>();
  for (const r of deps.routes)
    if (r.lane !== "admin") methodsByPath.set(r.path, (methodsByPath.get(r.path) ?? new Set()).add(r.method));
  for (const [path, methods] of methodsByPath) {
    app.all(path, () => {
      throw new HttpError(405, "Method Not Allowed", { Allow: [...methods].join(", ") });
    });
  }
  const families = [...deps.adminFamilies, ...deps.routes.filter((r) => r.lane === "admin").map((r) => r.path)];
  const isAdminPath = (p: string) => families.some((f) => p === f || p.startsWith(f.endsWith("-") ? f : `${f}/`));
  app.all("/api/*", async (c) => {
    if (isAdminPath(c.req.path)) throw new HttpError(404, "Not found");
    const m = c.req.method;
    if (m === "POST") throw new HttpError(405, "Method Not Allowed", { Allow: "GET" });
    if (m !== "GET" && m !== "HEAD") throw new HttpError(405, "Method Not Allowed", { Allow: "GET, POST" });
    await deps.auth.admit("apiKey", authRequest(c, false, deps.trust));
    throw new HttpError(404, "Not found");
  });
}
