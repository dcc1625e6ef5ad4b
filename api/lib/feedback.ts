import { randomUUID } from "node:crypto";
import { z } from "zod";
import { HttpError } from "./http-error.ts";
import { parseJsonBody, validBody } from "./json-body.ts";
import type { SqlClient } from "./key-store.ts";
import type { KeyRateLimiter } from "./rate-limit.ts";
import { schemaOnce } from "./sql-schema.ts";

/**
 * Feedback, `POST /api/feedback` (spec 4.4, 7): a form submission (`application/x-www-form-urlencoded`
 * fields, or the same fields as a JSON object) stored in the state store, behind its
 * own per-IP limiter (3 submissions per 600 s, separate from key quotas). The client IP is used for
 * the limit only and never stored.
 */

/** Submissions admitted per client IP per window (reference 2.4). */
export const FEEDBACK_MAX_SUBMISSIONS = 3;
/** The limiter's window, seconds. */
export const FEEDBACK_WINDOW_SEC = 600;
/** Largest feedback body, bytes (spec 8 leaves it open; documented in OpenAPI). */
export const FEEDBACK_MAX_BYTES = 8192;
/** Message of the feedback limit's 429 (spec 7: about too many submissions). */
export const TOO_MANY_SUBMISSIONS = "Too many submissions. Please wait a few minutes.";

/** Media type of an HTML form post; spec 4.4 calls feedback a form submission. */
export const FORM_MEDIA_TYPE = "application/x-www-form-urlencoded";

/**
 * The feedback fields of a request body: form fields (UTF-8, `a=b&c=d`) when the `Content-Type` header
 * value `contentType` is FORM_MEDIA_TYPE (parameters such as `charset` ignored), else a JSON object. An
 * empty form field other than `message` counts as absent (a form sends its blank inputs).
 * @throws HttpError 400 as parseJsonBody (`Invalid JSON body`, unknown or invalid field), and
 * `Invalid field <name>: given more than once` for a repeated form field.
 */
export function parseFeedbackBody(bytes: Uint8Array, contentType: string | undefined): FeedbackBody {
  if (contentType?.split(";")[0].trim().toLowerCase() !== FORM_MEDIA_TYPE)
    return parseJsonBody(bytes, FeedbackBodySchema);
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(Buffer.from(bytes).toString("utf8"))) {
    if (Object.hasOwn(fields, name)) throw new HttpError(400, `Invalid field ${name}: given more than once`);
    if (value !== "" || name === "message") fields[name] = value;
  }
  return validBody(fields, FeedbackBodySchema);
}

/** The documented body: `message` (1-4000 characters) required; `email`, `page` (site path or URL), `stablecoinId` optional; nothing else. */
export const FeedbackBodySchema = z
  .object({
    message: z.string().trim().min(1, "must not be empty").max(4000, "at most 4000 characters"),
    email: z.email().max(200).optional(),
    page: z.string().max(500, "at most 500 characters").optional(),
    stablecoinId: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,99}$/, "expected a stablecoin id like usdc-circle")
      .optional(),
  })
  .strict();
export type FeedbackBody = z.infer<typeof FeedbackBodySchema>;

const SCHEMA = `
create table if not exists feedback (
  id text primary key,
  message text not null,
  email text,
  page text,
  stablecoin_id text,
  created_at bigint not null
)`;

const RETRY_60 = { "Retry-After": "60" };

/** Feedback intake over the state store and a limiter (null: none wired, every submission answers 503). */
export class FeedbackStore {
  private readonly ensureSchema: () => Promise<void>;

  constructor(
    private readonly sql: SqlClient,
    private readonly limiter: KeyRateLimiter | null,
  ) {
    this.ensureSchema = schemaOnce(sql, SCHEMA);
  }

  /**
   * Validates and stores one submission from `ip` at `nowSec` (Unix s), its body read as `contentType`
   * says (parseFeedbackBody); returns its id. Order: body
   * (400 naming the field, nothing counted or stored), then the limiter, then the insert.
   * @throws HttpError 400 (body: not JSON, unknown, repeated or invalid field; see parseFeedbackBody); 429 `TOO_MANY_SUBMISSIONS` with
   * `Retry-After`; 503 with `Retry-After: 60` when the limiter is missing or unavailable, or the state
   * store fails.
   */
  async submit(bytes: Uint8Array, ip: string, nowSec: number, contentType?: string): Promise<string> {
    const body = parseFeedbackBody(bytes, contentType);
    if (!this.limiter) throw new HttpError(503, "Feedback temporarily unavailable", RETRY_60);
    let limit: Awaited<ReturnType<KeyRateLimiter["consume"]>>;
    try {
      limit = await this.limiter.consume(`feedback:${ip}`, FEEDBACK_MAX_SUBMISSIONS, FEEDBACK_WINDOW_SEC);
    } catch {
      throw new HttpError(503, "Feedback temporarily unavailable", RETRY_60);
    }
    if (!limit.ok) throw new HttpError(429, TOO_MANY_SUBMISSIONS, { "Retry-After": String(limit.retryAfterSec) });
    const id = randomUUID();
    try {
      await this.ensureSchema();
      await this.sql.query(
        "insert into feedback (id, message, email, page, stablecoin_id, created_at) values ($1, $2, $3, $4, $5, $6)",
        [id, body.message, body.email?.toLowerCase() ?? null, body.page ?? null, body.stablecoinId ?? null, nowSec],
      );
    } catch {
      throw new HttpError(503, "Feedback temporarily unavailable", RETRY_60);
    }
    return id;
  }

  /** Stored submissions, newest first (operators, tests). @throws the store's error. */
  async list(limit = 100): Promise<(FeedbackBody & { id: string; createdAt: number })[]> {
    await this.ensureSchema();
    const { rows } = await this.sql.query<{
      id: string;
      message: string;
      email: string | null;
      page: string | null;
      stablecoin_id: string | null;
      created_at: string | number;
    }>(
      "select id, message, email, page, stablecoin_id, created_at from feedback order by created_at desc, id limit $1",
      [limit],
    );
    return rows.map((r) => ({
      id: r.id,
      message: r.message,
      createdAt: Number(r.created_at),
      ...(r.email ? { email: r.email } : {}),
      ...(r.page ? { page: r.page } : {}),
      ...(r.stablecoin_id ? { stablecoinId: r.stablecoin_id } : {}),
    }));
  }
}
