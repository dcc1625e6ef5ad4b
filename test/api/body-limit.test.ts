/**
 * Oversized request bodies (issue 30 item 9): a write route answers 413 as soon as its byte cap is
 * passed, over real HTTP, while the client is still sending (the body is never buffered whole), and
 * the body reader pulls at most the cap plus one chunk from a body of any size.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodyTooLargeError, readBodyLimited } from "../../api/lib/body-reader.ts";
import { FEEDBACK_MAX_BYTES } from "../../api/lib/feedback.ts";
import type { startServer } from "../../api/server.ts";
import { startLocalServer } from "../helpers/local-server.ts";
import { publishFakeBuild } from "../helpers/ops.ts";
import { createTestSchema } from "../helpers/pg-schema.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let server: Awaited<ReturnType<typeof startServer>>;
let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ballast-body-limit-"));
  publishFakeBuild(dir, "body-limit-build", []);
  schema = await createTestSchema("ballast_body_limit");
  server = await startLocalServer(dir, schema.url, "pepper-for-body-limit-tests-0123");
}, 60_000);
afterAll(async () => {
  await server?.close();
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Starts a POST to /api/feedback that sends `firstBytes` of body and then never ends (no more bytes,
 * no end of the chunked body); resolves with the answer and whether the body was still open when it came.
 */
function postNeverEnding(
  firstBytes: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; bodyStillOpen: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: server.port,
        path: "/api/feedback",
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
      },
      (res) => {
        const bodyStillOpen = !req.writableEnded;
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString(), bodyStillOpen });
        });
      },
    );
    req.on("error", reject);
    req.write(Buffer.alloc(firstBytes, 0x61));
  });
}

describe("oversized bodies", () => {
  // Without a byte cap enforced while reading, the server waits for the end of a body that never
  // ends and never answers: the test then fails on its timeout (30 s; the answer comes in milliseconds).
  it("a chunked body past the cap is answered 413 before the client finished sending it", async () => {
    const r = await postNeverEnding(FEEDBACK_MAX_BYTES + 4096);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: `Request body larger than ${FEEDBACK_MAX_BYTES} bytes` });
    expect(r.bodyStillOpen).toBe(true);
  }, 30_000);

  it("a declared Content-Length past the cap is answered 413 before any byte of the body is read", async () => {
    const r = await postNeverEnding(1024, { "Content-Length": String(6 * 1024 * 1024) });
    expect(r.status).toBe(413);
    expect(r.bodyStillOpen).toBe(true);
  }, 30_000);

  it("a body within the cap is read whole (the reader does not cut a valid body short)", async () => {
    // 2,600 three-byte characters: within the message's 4,000 characters, 7,800+ bytes of the 8,192 allowed.
    const body = JSON.stringify({ message: "€".repeat(2600) });
    expect(Buffer.byteLength(body)).toBeGreaterThan(FEEDBACK_MAX_BYTES - 400);
    const res = await fetch(`http://127.0.0.1:${server.port}/api/feedback`, {
      method: "POST",
      body,
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(201);
  });
});

describe("readBodyLimited", () => {
  /** A 6 MiB body produced on demand in 16 KiB chunks; `pulled` counts the bytes the reader took. */
  function sixMiB() {
    const chunk = Buffer.alloc(16 * 1024, 0x62);
    const counter = { pulled: 0 };
    const stream = new Readable({
      highWaterMark: chunk.byteLength,
      read() {
        if (counter.pulled >= 6 * 1024 * 1024) return void this.push(null);
        counter.pulled += chunk.byteLength;
        this.push(chunk);
      },
    });
    return { stream, counter };
  }

  it("stops pulling a Node stream at the cap: at most the cap plus a few chunks of a 6 MiB body", async () => {
    const { stream, counter } = sixMiB();
    await expect(readBodyLimited(stream, 64 * 1024)).rejects.toBeInstanceOf(BodyTooLargeError);
    // Give the stream every chance to keep flowing: it must stay paused.
    await new Promise((r) => setImmediate(r));
    expect(counter.pulled).toBeLessThanOrEqual(64 * 1024 + 4 * 16 * 1024);
  });

  it("stops reading a web stream at the cap and cancels it", async () => {
    const { stream, counter } = sixMiB();
    await expect(readBodyLimited(Readable.toWeb(stream) as ReadableStream<Uint8Array>, 64 * 1024)).rejects.toThrow(
      "Request body larger than 65536 bytes",
    );
    expect(counter.pulled).toBeLessThan(1024 * 1024);
  });

  it("returns a body within the cap byte for byte", async () => {
    const bytes = await readBodyLimited(Readable.from([Buffer.from("ab"), Buffer.from("cd")]), 4);
    expect(Buffer.from(bytes).toString()).toBe("abcd");
  });
});
