import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { apiLog, errorMessage } from "./log.ts";
import { type ObjectReader, StorageUnavailableError } from "./published.ts";

/**
 * Settings of the S3 reader: the bucket the build's S3 sink publishes to (build/sinks/s3.ts, same
 * env names), how to reach it and how long to wait. Times are milliseconds.
 */
export interface S3ReaderOptions {
  /** Endpoint of an S3-compatible store (MinIO, R2, s3rver); unset: AWS S3 of `region`. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** Static credentials; both unset: the SDK's default chain (env, shared config, instance or task role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style addressing (`<endpoint>/<bucket>/<key>`), as the build's sink uses; default true. */
  forcePathStyle?: boolean;
  /** Prefix prepended to every key (`<prefix><key>`), e.g. `ballast/`; default none (the sink writes at the bucket root). */
  prefix?: string;
  /** Deadline of opening a connection; default 1000. */
  connectTimeoutMs?: number;
  /** Deadline of a request until its response starts, and the longest idle gap while its body streams; default 3000. */
  requestTimeoutMs?: number;
  /** Upper bound of concurrent connections to the store (requests beyond it queue); default 64. */
  maxSockets?: number;
  /** Attempts per read, the first included (the SDK's retry with backoff); default 2. */
  maxAttempts?: number;
  /**
   * Longest wait of one read until the store starts answering, every attempt included (the body then
   * streams under `requestTimeoutMs`); default 2000. A store that accepts and never answers costs a
   * request at most this, not `maxAttempts × requestTimeoutMs`.
   */
  readDeadlineMs?: number;
}

/** An S3 reader and the client behind it. */
export interface S3ObjectReader {
  /** `key` → the object's bytes; null when the store says it does not exist. @throws StorageUnavailableError on any other failure. */
  read: ObjectReader;
  /** `s3://<bucket>/<prefix><key>` (logs, health). */
  describe(key: string): string;
  /** Closes the connection pool; reads after it fail. */
  close(): void;
}

/** Interval between two logged read failures (ms): a store that is down logs once per interval, not once per request. */
const LOG_EVERY_MS = 10_000;

/**
 * Reader over a bucket the build's S3 sink publishes to (`latest.json`, `builds/<id>/…`, dated
 * datasets, snapshots and digests at the same keys as under the fs data dir), through
 * `@aws-sdk/client-s3` GetObject on a bounded keep-alive pool.
 *
 * A missing key (`NoSuchKey`, `NotFound`, HTTP 404) reads as null, as a missing file does for
 * `fsReader`. Grant the API `s3:ListBucket` besides `s3:GetObject`: without it S3 answers 403 for
 * missing keys, which this reader cannot tell from a denied read and reports as unavailable. Every
 * other failure (connection refused or timed out, 403, 5xx, missing bucket) throws
 * StorageUnavailableError (HTTP 503 when it reaches a route); `PublishedStore` then keeps serving the
 * build it has. Failures are logged (stage `storage`) at most once per 10 s.
 */
export function s3Reader(opts: S3ReaderOptions): S3ObjectReader {
  const requestTimeout = opts.requestTimeoutMs ?? 3000;
  const readDeadline = opts.readDeadlineMs ?? 2000;
  const agent = { keepAlive: true, maxSockets: opts.maxSockets ?? 64 };
  const client = new S3Client({
    endpoint: opts.endpoint,
    region: opts.region,
    forcePathStyle: opts.forcePathStyle ?? true,
    maxAttempts: opts.maxAttempts ?? 2,
    ...(opts.accessKeyId && opts.secretAccessKey
      ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } }
      : {}),
    requestHandler: {
      connectionTimeout: opts.connectTimeoutMs ?? 1000,
      requestTimeout,
      throwOnRequestTimeout: true,
      socketTimeout: requestTimeout,
      httpAgent: new HttpAgent(agent),
      httpsAgent: new HttpsAgent(agent),
    },
  });
  const prefix = opts.prefix ?? "";
  const describe = (key: string) => `s3://${opts.bucket}/${prefix}${key}`;
  let loggedAt = -Infinity;
  /** One GET of `key` (the whole object, or bytes [start, end) with a Range header). */
  const get = async (key: string, range?: readonly [number, number]): Promise<Uint8Array | null> => {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new ReadDeadlineError(readDeadline)), readDeadline);
    try {
      const res = await client.send(
        new GetObjectCommand({
          Bucket: opts.bucket,
          Key: prefix + key,
          ...(range ? { Range: `bytes=${range[0]}-${range[1] - 1}` } : {}),
        }),
        { abortSignal: deadline.signal },
      );
      clearTimeout(timer); // the store answers: the body streams under requestTimeout
      if (!res.Body) return new Uint8Array(0);
      return await res.Body.transformToByteArray();
    } catch (thrown) {
      clearTimeout(timer);
      const err: unknown = deadline.signal.aborted ? deadline.signal.reason : thrown;
      if (isMissing(err)) return null;
      if (Date.now() - loggedAt >= LOG_EVERY_MS) {
        loggedAt = Date.now();
        apiLog("warn", "storage", "object store read failed", {
          object: describe(key),
          error: errorMessage(err),
          status: statusOf(err) ?? null,
        });
      }
      throw new StorageUnavailableError(describe(key), reasonOf(err), err);
    }
  };
  // Byte ranges (ledger pages, api/queries/blacklist-pages.ts) are Range GETs, several at once.
  const read: ObjectReader = Object.assign((key: string) => get(key), {
    ranges: async (key: string, ranges: readonly [number, number][]) => {
      const parts = await Promise.all(
        ranges.map((r) => (r[1] > r[0] ? get(key, r) : Promise.resolve(new Uint8Array(0)))),
      );
      return parts.some((p) => p === null) ? null : (parts as Uint8Array[]);
    },
  });
  return { read, describe, close: () => client.destroy() };
}

/** A read the store did not start answering within `readDeadlineMs` (reason `ReadDeadlineExceeded`). */
class ReadDeadlineError extends Error {
  override readonly name = "ReadDeadlineExceeded";
  constructor(ms: number) {
    super(`object store did not answer within ${ms} ms`);
  }
}

/** HTTP status of an SDK error, when the store answered. */
function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** Short generic cause of a failed read: `HTTP <status> <error name>` when the store answered, else the socket error code or the error name. */
function reasonOf(err: unknown): string {
  const e = err as { name?: string; code?: string };
  const status = statusOf(err);
  if (status !== undefined) return `HTTP ${status} ${e.name ?? ""}`.trim();
  return e.code ?? e.name ?? "unknown error";
}

/** Whether an SDK error says the key does not exist (not a missing bucket: that is a configuration error). */
function isMissing(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  if (name === "NoSuchKey" || name === "NotFound") return true;
  return statusOf(err) === 404 && name !== "NoSuchBucket";
}
