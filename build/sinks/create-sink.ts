import type { BuildConfig } from "../config.ts";
import { FsSink } from "./fs.ts";
import { S3Sink } from "./s3.ts";
import type { PublishSink } from "./sink.ts";

/** The sink named by config: filesystem under BALLAST_DATA_DIR, or S3. */
export function createSink(
  config: Pick<
    BuildConfig,
    | "STORAGE_DRIVER"
    | "BALLAST_DATA_DIR"
    | "S3_ENDPOINT"
    | "S3_BUCKET"
    | "S3_REGION"
    | "S3_ACCESS_KEY_ID"
    | "S3_SECRET_ACCESS_KEY"
  >,
): PublishSink {
  if (config.STORAGE_DRIVER === "s3") {
    return new S3Sink({
      endpoint: config.S3_ENDPOINT,
      bucket: config.S3_BUCKET!,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID!,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY!,
    });
  }
  return new FsSink(config.BALLAST_DATA_DIR);
}
