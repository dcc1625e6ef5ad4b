import type { BuildConfig } from "../config.ts";
import { FsSink } from "./fs.ts";
import { S3Sink } from "./s3.ts";
import type { PublishSink } from "./sink.ts";
import { must } from "../../lib/must.ts";

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
      bucket: must(config.S3_BUCKET, "S3_BUCKET (required when STORAGE_DRIVER=s3)"),
      region: config.S3_REGION,
      accessKeyId: must(config.S3_ACCESS_KEY_ID, "S3_ACCESS_KEY_ID (required when STORAGE_DRIVER=s3)"),
      secretAccessKey: must(config.S3_SECRET_ACCESS_KEY, "S3_SECRET_ACCESS_KEY (required when STORAGE_DRIVER=s3)"),
    });
  }
  return new FsSink(config.BALLAST_DATA_DIR);
}
