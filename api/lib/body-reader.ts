import { Readable } from "node:stream";

/** Thrown by `readBodyLimited` once more than `maxBytes` arrived (or were declared); the caller answers 413. */
export class BodyTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`Request body larger than ${maxBytes} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/**
 * Reads a request body of at most `maxBytes` bytes from `source`: a Node request stream (the
 * `IncomingMessage` of the server) or a web `ReadableStream` (a `Request` body; null reads as empty).
 * Bytes are kept only up to the cap: the read stops at the first chunk past it, so a body of any
 * size costs at most `maxBytes` plus one chunk (≤ 64 KiB) of memory, and the answer can go out
 * while the client is still sending. A Node stream is left paused and unconsumed past that point
 * (the server drains or closes the connection after answering); a web stream is cancelled.
 * @throws BodyTooLargeError when `declaredLength` (Content-Length) or the bytes that arrive exceed `maxBytes`.
 * @throws the stream's error (client gone mid-body).
 */
export async function readBodyLimited(
  source: Readable | ReadableStream<Uint8Array> | null,
  maxBytes: number,
  declaredLength?: number,
): Promise<Uint8Array> {
  if (declaredLength !== undefined && declaredLength > maxBytes) throw new BodyTooLargeError(maxBytes);
  if (source === null) return new Uint8Array(0);
  return source instanceof Readable ? readNode(source, maxBytes) : readWeb(source, maxBytes);
}

function readNode(stream: Readable, maxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: Error | null) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      stream.off("close", onClose);
      if (err) {
        stream.pause();
        reject(err);
      } else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer | string) => {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += b.byteLength;
      if (size > maxBytes) return done(new BodyTooLargeError(maxBytes));
      chunks.push(b);
    };
    const onEnd = () => done(null);
    const onError = (err: Error) => done(err);
    const onClose = () =>
      done(stream.readableEnded ? null : new Error("Client connection closed before the body ended"));
    if (stream.readableEnded) return resolve(new Uint8Array(0));
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
    stream.on("close", onClose);
  });
}

async function readWeb(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}
