import type { Hono } from "hono";
import { HttpError } from "../lib/http-error.ts";
import { apiLog, errorMessage } from "../lib/log.ts";
import { type Cors, isStaticPath } from "./cors.ts";

/** An error answer as plain parts (the Node fast path writes them without building a Response). */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The `{ error }` answer of a thrown error (spec 1 rule 4, spec 7): an HttpError with its status,
 * headers and extra fields (e.g. `reason`); anything else a logged 500 `Internal Server Error` that
 * never echoes the error text. Always `Cache-Control: no-store`; CORS as for the path.
 */
export function errorAnswer(cors: Cors, err: unknown, path: string, origin: string | undefined): ErrorAnswer {
  const headers: Record<string, string> = {
    ...(isStaticPath(path) ? { "Access-Control-Allow-Origin": "*" } : cors.headers(origin)),
    "Cache-Control": "no-store",
    "Content-Type": "application/json",
  };
  if (err instanceof HttpError)
    return {
      status: err.status,
      headers: { ...headers, ...err.headers },
      body: JSON.stringify({ error: err.message, ...err.extra }),
    };
  apiLog("error", "api", errorMessage(err), { path });
  return { status: 500, headers, body: JSON.stringify({ error: "Internal Server Error" }) };
}

/** Installs the error answer (errorAnswer) and the 404 `{ error: "Not found" }` of unmatched paths on `app`. */
export function installErrorHandlers(app: Hono, cors: Cors): void {
  app.onError((err, c) => {
    const r = errorAnswer(cors, err, c.req.path, c.req.header("Origin"));
    return c.body(r.body, r.status as 500, r.headers);
  });
  app.notFound((c) =>
    c.json(
      { error: "Not found" },
      404,
      isStaticPath(c.req.path) ? { "Access-Control-Allow-Origin": "*" } : cors.headers(c.req.header("Origin")),
    ),
  );
}
