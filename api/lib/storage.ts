import type { ApiConfig } from "../config.ts";
import { fsReader, type ObjectReader } from "./published.ts";

/** Config fields that choose and reach published storage (api/config.ts; the same names as build/config.ts). */
export type StorageConfig = Pick<ApiConfig, "BALLAST_DATA_DIR"> &
  Partial<
    Pick<
      ApiConfig,
      | "STORAGE_DRIVER"
      | "S3_ENDPOINT"
      | "S3_BUCKET"
      | "S3_REGION"
      | "S3_ACCESS_KEY_ID"
      | "S3_SECRET_ACCESS_KEY"
      | "S3_FORCE_PATH_STYLE"
      | "S3_PREFIX"
      | "S3_CONNECT_TIMEOUT_MS"
      | "S3_REQUEST_TIMEOUT_MS"
      | "S3_READ_DEADLINE_MS"
      | "S3_MAX_SOCKETS"
    >
  >;

/** The reader the API serves published builds through, what it reads (`fs:<dir>` or `s3://<bucket>/<prefix>`), and how to release it. */
export interface StorageReader {
  driver: "fs" | "s3";
  read: ObjectReader;
  location: string;
  close(): void;
}

/**
 * The published-storage reader named by the config: `fsReader(BALLAST_DATA_DIR)` (default), or with
 * `STORAGE_DRIVER=s3` an S3 reader of `S3_BUCKET` (api/lib/s3-reader.ts: missing key → null, other
 * failures → StorageUnavailableError, bounded pool and deadlines).
 * @throws Error when STORAGE_DRIVER=s3 and S3_BUCKET is unset (the zod config already refuses it).
 */
export async function openStorageReader(config: StorageConfig): Promise<StorageReader> {
  if (config.STORAGE_DRIVER !== "s3")
    return {
      driver: "fs",
      read: fsReader(config.BALLAST_DATA_DIR),
      location: `fs:${config.BALLAST_DATA_DIR}`,
      close: () => undefined,
    };
  if (!config.S3_BUCKET) throw new Error("S3_BUCKET is required when STORAGE_DRIVER=s3");
  const { s3Reader } = await import("./s3-reader.ts"); // the AWS SDK loads only when used
  const s3 = s3Reader({
    endpoint: config.S3_ENDPOINT,
    bucket: config.S3_BUCKET,
    region: config.S3_REGION ?? "us-east-1",
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE ?? true,
    prefix: config.S3_PREFIX,
    connectTimeoutMs: config.S3_CONNECT_TIMEOUT_MS,
    requestTimeoutMs: config.S3_REQUEST_TIMEOUT_MS,
    readDeadlineMs: config.S3_READ_DEADLINE_MS,
    maxSockets: config.S3_MAX_SOCKETS,
  });
  return { driver: "s3", read: s3.read, location: s3.describe(""), close: s3.close };
}
