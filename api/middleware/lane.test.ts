import { describe, expect, it } from "vitest";
import { HttpError } from "../lib/http-error.ts";
import type { AuthRequest, Lane, LaneAuth } from "../lib/auth.ts";
import { admitRoute, routeLane } from "./lane.ts";

describe("the lane of a request (one decision for the app and the fast path)", () => {
  const headers = (h: Record<string, string>) => (n: string) => h[n];

  it("a keyed GET with the site secret header is judged on the site lane; anything else on its declared lane", () => {
    expect(routeLane({ lane: "apiKey", method: "GET" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe("site");
    expect(routeLane({ lane: "apiKey", method: "GET" }, headers({ "X-API-Key": "k" }))).toBe("apiKey");
    expect(routeLane({ lane: "apiKey", method: "POST" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe(
      "apiKey",
    );
    expect(routeLane({ lane: "public", method: "GET" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe(
      "public",
    );
    expect(routeLane({ lane: "admin", method: "GET" }, headers({ "X-Ballast-Site-Proxy-Secret": "s" }))).toBe("admin");
  });

  it("admitRoute asks LaneAuth about that lane and passes its refusal on", async () => {
    const asked: Lane[] = [];
    const auth = {
      admit: async (lane: Lane) => {
        asked.push(lane);
        if (lane === "site") throw new HttpError(401, "Unauthorized");
      },
    } as unknown as LaneAuth;
    const req = (h: Record<string, string>): AuthRequest => ({
      header: headers(h),
      ip: "203.0.113.1",
      cacheableGet: true,
    });
    await admitRoute(auth, { lane: "apiKey", method: "GET" }, req({ "X-API-Key": "k" }));
    await expect(
      admitRoute(auth, { lane: "apiKey", method: "GET" }, req({ "X-Ballast-Site-Proxy-Secret": "bad" })),
    ).rejects.toMatchObject({ status: 401 });
    expect(asked).toEqual(["apiKey", "site"]);
  });
});
