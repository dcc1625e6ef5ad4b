import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { assertFolderPrefix, type PublishSink } from "./sink.ts";

/** Settings of an S3-compatible object store (AWS, MinIO, R2, s3rver). */
export interface S3SinkOptions {
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** Keys one DeleteObjects request may name (S3 limit). */
const DELETE_BATCH = 1000;

/** S3-compatible sink (path-style addressing so loopback servers work). */
export class S3Sink implements PublishSink {
  private readonly client: S3Client;
  constructor(private readonly opts: S3SinkOptions) {
    this.client = new S3Client({
      endpoint: opts.endpoint,
      region: opts.region,
      forcePathStyle: true,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
    });
  }

  async put(key: string, body: Uint8Array | string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.opts.bucket, Key: key, Body: body }));
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.opts.bucket, Key: key }));
      return res.Body ? await res.Body.transformToByteArray() : null;
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === "NoSuchKey" || name === "NotFound") return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of this.pages(prefix)) for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
    return keys.sort();
  }

  async listDirs(prefix: string): Promise<string[]> {
    const dirs: string[] = [];
    for await (const page of this.pages(prefix, "/")) {
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix) dirs.push(p.Prefix.slice(prefix.length, -1));
    }
    return dirs.sort();
  }

  /** Always empty: an S3 put is atomic, so a killed writer leaves nothing behind. */
  async listAbandoned(): Promise<string[]> {
    return [];
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.opts.bucket, Key: key }));
  }

  async deletePrefix(prefix: string): Promise<void> {
    assertFolderPrefix(prefix);
    const keys = await this.list(prefix);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const res = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.opts.bucket,
          Delete: { Objects: keys.slice(i, i + DELETE_BATCH).map((Key) => ({ Key })), Quiet: true },
        }),
      );
      if (res.Errors?.length)
        throw new Error(
          `deletePrefix ${prefix}: ${res.Errors.length} objects not deleted (first: ${res.Errors[0].Key}: ${res.Errors[0].Message})`,
        );
    }
  }

  describe(key: string): string {
    return `s3://${this.opts.bucket}/${key}`;
  }

  /** ListObjectsV2 pages under a prefix (with `delimiter`, sub-folders come as CommonPrefixes). */
  private async *pages(prefix: string, delimiter?: string): AsyncGenerator<ListObjectsV2CommandOutput> {
    let token: string | undefined;
    do {
      const res = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.opts.bucket,
          Prefix: prefix,
          Delimiter: delimiter,
          ContinuationToken: token,
        }),
      );
      yield res;
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
  }
}
