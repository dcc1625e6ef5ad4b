import {
  isExpiredError,
  isSignatureInvalidError,
  isSignatureMissingError,
  parse,
  validate,
} from "@telegram-apps/init-data-node";
import { HttpError } from "../http-error.ts";

/**
 * Mini-app init data (Telegram `WebApp.initData`, a query string) checked with
 * `@telegram-apps/init-data-node`: the HMAC per Telegram's documented algorithm (secret key =
 * HMAC-SHA256(key "WebAppData", bot token); hash = hex HMAC-SHA256(secret key, the `key=value` lines
 * of every other field, sorted, joined by `\n`)), then `auth_date` freshness against the service's
 * wall clock (the library's own expiry check reads `Date.now` and is turned off), then the fields
 * (the library's parser: Telegram sends `signature` with every init data since Bot API 8.0) and the
 * user payload. The Ed25519 `signature` (for third parties without the token) is not checked: the
 * HMAC with our own bot token covers it.
 */

/** A verified launch: its Telegram user, `auth_date` (Unix s) and `hash` (hex; identifies the launch). */
export interface VerifiedInitData {
  userId: string;
  authDate: number;
  hash: string;
}

/** `auth_date` may lie this far (s) in the future (clock skew between Telegram and this host). */
export const AUTH_DATE_FUTURE_SKEW_SEC = 60;

const unauthorized = (why: string) =>
  new HttpError(401, `Invalid init data: ${why}`, {}, { reason: "init_data_invalid" });

/**
 * Verifies `raw` for `token` at wall-clock `nowSec`, valid for `maxAgeSec` after its `auth_date`.
 * @throws HttpError 401 `{ error: "Invalid init data: <why>", reason }` with reason `init_data_invalid`
 *   (missing or wrong hash, unreadable `auth_date`, auth_date in the future, no user) or
 *   `init_data_expired` (older than `maxAgeSec`).
 */
export function verifyInitData(raw: string, token: string, nowSec: number, maxAgeSec: number): VerifiedInitData {
  try {
    validate(raw, token, { expiresIn: 0 });
  } catch (err) {
    if (isSignatureMissingError(err)) throw unauthorized("hash missing");
    if (isSignatureInvalidError(err)) throw unauthorized("signature mismatch");
    if (isExpiredError(err)) throw unauthorized("expired"); // not reached with expiresIn 0
    throw unauthorized("auth_date missing or not a number");
  }
  let data: { auth_date: Date; hash: string; user?: { id: number; is_bot?: boolean } };
  try {
    data = parse(raw);
  } catch {
    throw unauthorized("fields unreadable (expected Telegram's auth_date, user and signature fields)");
  }
  const authDate = Math.floor(data.auth_date.getTime() / 1000);
  if (authDate > nowSec + AUTH_DATE_FUTURE_SKEW_SEC) throw unauthorized("auth_date in the future");
  if (nowSec - authDate > maxAgeSec) {
    throw new HttpError(
      401,
      `Invalid init data: expired (auth_date ${nowSec - authDate} s old, at most ${maxAgeSec} s)`,
      {},
      { reason: "init_data_expired" },
    );
  }
  const user = data.user;
  if (!user || !Number.isSafeInteger(user.id) || user.id <= 0 || user.is_bot === true)
    throw unauthorized("no user payload");
  return { userId: String(user.id), authDate, hash: data.hash };
}
