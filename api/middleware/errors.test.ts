import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { HttpError } from "../lib/http-error.ts";
import { Cors } from "./cors.ts";
import { errorAnswer, installErrorHandlers } from "./errors.ts";

describe("error answers (spec 1 rule 4, spec 7)", () => {
  const cors = new Cors(["https://a.example"]);

  it("an HttpError keeps its status, headers and extra fields; always no-store", () => {
    const r = errorAnswer(
      cors,
      new HttpError(429, "Too many", { "Retry-After": "60" }, { reason: "rate_limited" }),
      "/api/x",
      "https://a.example",
    );
    expect(r.status).toBe(429);
    expect(r.headers).toMatchObject({
      "Retry-After": "60",
      "Cache-Control": "no-store",
      "Access-Control-Allow-Origin": "https://a.example",
    });
    expect(JSON.parse(r.body)).toEqual({ error: "Too many", reason: "rate_limited" });
  });

  it("anything else is a 500 that never echoes the error's text; static paths allow any origin", () => {
    process.env.BALLAST_LOG = "silent";
    const r = errorAnswer(cors, new Error("ECONNREFUSED 127.0.0.1:5432 password=secret"), "/datasets/x.csv", undefined);
    expect([r.status, JSON.parse(r.body), r.headers["Access-Control-Allow-Origin"]]).toEqual([
      500,
      { error: "Internal Server Error" },
      "*",
    ]);
  });

  it("installed on an app: thrown errors and unmatched paths answer JSON", async () => {
    const app = new Hono();
    installErrorHandlers(app, cors);
    app.get("/api/boom", () => {
      throw new HttpError(404, "Unknown stablecoin");
    });
    const boom = await app.request("/api/boom");
    expect([boom.status, await boom.json(), boom.headers.get("cache-control")]).toEqual([
      404,
      { error: "Unknown stablecoin" },
      "no-store",
    ]);
    const none = await app.request("/nope");
    expect([none.status, await none.json()]).toEqual([404, { error: "Not found" }]);
  });
});
