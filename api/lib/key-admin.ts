/**
 * Local key administration of a server that owns the embedded state store: a small HTTP endpoint on
 * a unix socket in the state dir (mode 0600, so only the owning OS user can connect; never on a TCP
 * port, never on the public lane). `scripts/keys.ts` uses it while the server runs, so every change
 * goes through the server's own `KeyStore` (and its verification cache) and takes effect at once.
 *
 * Protocol (JSON bodies): `GET /keys` → 200 listings; `POST /keys` (NewKeyInput) → 201
 * `{ record, token }`; `POST /keys/:id/update` (KeyPatch) → 200 listing; `POST /keys/:id/deactivate`
 * → 200 `{ ok: true }`; `POST /keys/:id/rotate` → 200 `{ record, token }`. Errors: 400 `{ error, field }`
 * (KeyInputError), 404 `{ error }` (no such key), 503 `{ error, reason }` (state store unavailable).
 */
import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DependencyReason } from "./dependency-reason.ts";
import {
  type ApiKeyListing,
  type ApiKeyRecord,
  KeyInputError,
  type KeyInputField,
  type KeyPatch,
  type KeyStore,
  type NewKeyInput,
  StateStoreUnavailableError,
} from "./key-store.ts";
import { apiLog, errorMessage } from "./log.ts";

/** The key operations the CLI needs; `KeyStore` and the socket client both provide them. */
export interface KeyAdmin {
  create(input: NewKeyInput): Promise<{ record: ApiKeyRecord; token: string }>;
  list(): Promise<ApiKeyListing[]>;
  deactivate(id: string): Promise<boolean>;
  rotate(id: string): Promise<{ record: ApiKeyRecord; token: string } | null>;
  update(id: string, patch: KeyPatch): Promise<ApiKeyListing | null>;
}

/** The server's admin socket did not answer (gone, or not a Ballast server). */
export class KeyAdminUnreachableError extends Error {
  override readonly name = "KeyAdminUnreachableError";
}

const MAX_BODY = 16 * 1024;

/**
 * Where a server listens for key administration: `<stateDir>/admin.sock`, or a private temp dir
 * (mode 0700) when that path is too long for a unix socket (~107 bytes).
 */
export function adminSocketPath(stateDir: string): string {
  const p = join(stateDir, "admin.sock");
  return Buffer.byteLength(p) <= 100 ? p : join(mkdtempSync(join(tmpdir(), "ballast-admin-")), "admin.sock");
}

/**
 * Serves key administration for `keys` on unix socket `path` (an existing file there is removed
 * first: the caller owns the state dir). Resolves once listening; `close` stops it and removes the file.
 * @throws when the socket cannot be bound.
 */
export async function startKeyAdminSocket(
  keys: KeyStore,
  path: string,
): Promise<{ path: string; close(): Promise<void> }> {
  rmSync(path, { force: true });
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res
        .writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" })
        .end(JSON.stringify(body));
    };
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        send(413, { error: "body too large" });
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (res.headersSent) return;
      void (async () => {
        try {
          const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown) : {};
          if (typeof body !== "object" || body === null || Array.isArray(body))
            return send(400, { error: "expected a JSON object", field: "patch" });
          const url = req.url ?? "";
          const m = /^\/keys\/([^/]+)\/(update|deactivate|rotate)$/.exec(url);
          if (req.method === "GET" && url === "/keys") return send(200, await keys.list());
          if (req.method === "POST" && url === "/keys") return send(201, await keys.create(body as NewKeyInput));
          if (req.method === "POST" && m) {
            const id = decodeURIComponent(m[1]);
            if (m[2] === "deactivate")
              return (await keys.deactivate(id))
                ? send(200, { ok: true })
                : send(404, { error: `no key with id ${JSON.stringify(id)}` });
            if (m[2] === "rotate") {
              const r = await keys.rotate(id);
              return r ? send(200, r) : send(404, { error: `no active key with id ${JSON.stringify(id)}` });
            }
            const u = await keys.update(id, body as KeyPatch);
            return u ? send(200, u) : send(404, { error: `no key with id ${JSON.stringify(id)}` });
          }
          return send(404, { error: "unknown admin call" });
        } catch (err) {
          if (err instanceof SyntaxError) return send(400, { error: "invalid JSON body", field: "patch" });
          if (err instanceof KeyInputError) return send(400, { error: err.message, field: err.field });
          if (err instanceof StateStoreUnavailableError) return send(503, { error: err.message, reason: err.reason });
          apiLog("error", "key-admin", errorMessage(err));
          return send(500, { error: "Internal Server Error" });
        }
      })();
    });
  });
  server.listen(path);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(path, { force: true });
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/**
 * A {@link KeyAdmin} that calls a server's admin socket. Errors are rethrown as the server raised
 * them: KeyInputError (400), StateStoreUnavailableError (503); not found is null/false as on
 * `KeyStore`. @throws KeyAdminUnreachableError when nothing answers on the socket (within `timeoutMs`, default 20 s).
 */
export function keyAdminClient(socketPath: string, timeoutMs = 20_000): KeyAdmin {
  /** Status and parsed JSON body of one call (the protocol above: the server's own answers, not re-validated). */
  type Answer = { status: number; body: unknown };
  type Created = { record: ApiKeyRecord; token: string };
  const call = (method: "GET" | "POST", path: string, body?: unknown): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = request(
        {
          socketPath,
          method,
          path,
          headers: payload ? { "Content-Type": "application/json", "Content-Length": payload.length } : {},
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
            } catch {
              reject(new KeyAdminUnreachableError(`the admin socket ${socketPath} answered something other than JSON`));
            }
          });
          res.on("error", (err) =>
            reject(new KeyAdminUnreachableError(`the admin socket ${socketPath} failed: ${errorMessage(err)}`)),
          );
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", (err) =>
        reject(new KeyAdminUnreachableError(`the admin socket ${socketPath} does not answer (${errorMessage(err)})`)),
      );
      req.end(payload);
    });
  const fail = (r: Answer): never => {
    const body = r.body as { error?: string; field?: KeyInputField; reason?: DependencyReason };
    if (r.status === 400) throw new KeyInputError(body.field ?? "patch", body.error ?? "invalid input");
    if (r.status === 503)
      throw new StateStoreUnavailableError(body.error ?? "state store unavailable", { reason: body.reason });
    throw new Error(`admin socket answered ${r.status}: ${body.error ?? ""}`);
  };
  const path = (id: string, op: string) => `/keys/${encodeURIComponent(id)}/${op}`;
  return {
    async create(input) {
      const r = await call("POST", "/keys", input);
      return r.status === 201 ? (r.body as Created) : fail(r);
    },
    async list() {
      const r = await call("GET", "/keys");
      return r.status === 200 ? (r.body as ApiKeyListing[]) : fail(r);
    },
    async deactivate(id) {
      const r = await call("POST", path(id, "deactivate"), {});
      return r.status === 200 ? true : r.status === 404 ? false : fail(r);
    },
    async rotate(id) {
      const r = await call("POST", path(id, "rotate"), {});
      return r.status === 200 ? (r.body as Created) : r.status === 404 ? null : fail(r);
    },
    async update(id, patch) {
      const r = await call("POST", path(id, "update"), patch);
      return r.status === 200 ? (r.body as ApiKeyListing) : r.status === 404 ? null : fail(r);
    },
  };
}
