import { createHash } from "node:crypto";
import type { Address, Hex } from "viem";
import { z } from "zod";
import {
  type DonationsLedgerPayload,
  DonationsLedgerSchema,
  donationsLedgerArtifact,
} from "../../site-data/donations-ledger.ts";
import { SafetyGradesPayloadSchema, safetyGradesArtifact } from "../../site-data/report-cards.ts";
import { HttpError } from "./http-error.ts";
import type { KeyStore } from "./key-store.ts";
import { apiLog } from "./log.ts";
import type { ServingBuild } from "./published.ts";
import type { KeyRateLimiter } from "./rate-limit.ts";

/**
 * Donor (supporter) key claims, `POST /api/donor-key-claims` (spec 5.3, 7 rules 1-2): a wallet that
 * donated at least USD 10 in qualifying stablecoins signs an EIP-4361 message and gets one `donor`
 * key (10 requests per minute, no expiry). The donations come from the serving build's ledger
 * (site-data/donations-ledger.json, pipelines/registry/donations.ts) and the grades from its safety
 * grades (site-data/safety-grades.json). Every failure is a `ClaimError` `{ error, reason }`.
 */

/** Smallest qualifying donation total, USD, inclusive (spec 5.3). */
export const DONOR_MIN_USD = 10;
/** Floating-point tolerance of the threshold: a total of 10 − 1e-9 USD qualifies. */
export const DONOR_USD_TOLERANCE = 1e-9;
/** Grades whose coins count: A+ to B- (spec 5.3). */
export const QUALIFYING_GRADE = /^[AB][+-]?$/;
/** Validity window of a claim message: 5 minutes (spec 5.3). */
export const CLAIM_MESSAGE_MAX_AGE_SEC = 300;
/** Claim attempts per client IP per 60 s, checked before the body is read (spec 5.3, 8). */
export const CLAIM_ATTEMPTS_PER_MINUTE = 10;
/** Largest claim body (spec 8: at most 4096 bytes). */
export const CLAIM_BODY_MAX_BYTES = 4096;
/** Statement of the claim message (its byte-exact canonical form is rebuilt from address, nonce and time). */
export const CLAIM_STATEMENT =
  "Claim your Ballast supporter API key. One key per wallet, no expiry, 10 requests per minute.";

/** Failure reasons of spec 7 rule 1. */
export type ClaimReason =
  | "body_invalid"
  | "siwe_invalid"
  | "signature_invalid"
  | "claims_closed"
  | "claim_revoked"
  | "ineligible"
  | "claim_exists"
  | "claim_orphaned"
  | "rate_limited"
  | "rate_limiter_missing"
  | "rate_limit_unavailable"
  | "donations_ledger_invalid"
  | "safety_scores_unavailable"
  | "grade_unavailable"
  | "pepper_missing"
  | "issue_failed";

/** A donor-claim failure: `{ error, reason, ...extra }` (spec 7 rule 1). */
export class ClaimError extends HttpError {
  constructor(
    status: 400 | 403 | 409 | 413 | 429 | 503,
    message: string,
    readonly reason: ClaimReason,
    headers: Record<string, string> = {},
    extra: Record<string, unknown> = {},
  ) {
    super(status, message, headers, { reason, ...extra });
  }
}

const RETRY_60 = { "Retry-After": "60" };

/** Settings of claims: the site domain and API page the message names, the chain id, the switch, and an optional RPC for the account-code check. */
export interface DonorClaimConfig {
  /** `claims_closed` when false. */
  open: boolean;
  /** EIP-4361 domain (host of the site, e.g. `ballast.example`). */
  domain: string;
  /** EIP-4361 URI: the API access page (e.g. `https://ballast.example/api/`). */
  uri: string;
  /** EIP-4361 chain id (default 1). */
  chainId: number;
  /** JSON-RPC of that chain: an address with code (a contract wallet or a delegated account) is refused. Unset: ECDSA recovery alone (contract wallets cannot sign). */
  rpcUrl?: string;
}

/** What a claim needs: settings, the key store, the limiter of claim attempts (null: none wired → 503 `rate_limiter_missing`). */
export interface DonorClaimDeps {
  config: DonorClaimConfig;
  keys: KeyStore;
  limiter: KeyRateLimiter | null;
}

/** Outcome of {@link donorEligibility}; USD figures rounded to cents for display. */
export interface Eligibility {
  outcome: "eligible" | "ineligible" | "grade_unavailable";
  /** USD of counted receipts in coins graded A+ to B-. */
  qualifyingUsd: number;
  /** USD of counted receipts whose coin has no available grade. */
  unavailableUsd: number;
  /** Labels `<SYMBOL> on <chain>` of the receipts that counted, sorted. */
  countedAssets: string[];
}

/**
 * Eligibility of `address` (any case) from a ledger and the current grades (coin id → grade; a coin
 * absent from `grades` has no available grade). Counts receipts classified `counted` whose coin's
 * grade matches A+ to B- (`NR`, C and below do not count). Eligible at a total ≥ 10 USD − 1e-9;
 * otherwise `grade_unavailable` when the receipts of ungraded coins could lift it over, else `ineligible`.
 */
export function donorEligibility(
  address: string,
  ledger: DonationsLedgerPayload,
  grades: ReadonlyMap<string, string>,
): Eligibility {
  const from = address.toLowerCase();
  let qualifying = 0;
  let unavailable = 0;
  const assets = new Set<string>();
  for (const r of ledger.receipts) {
    if (r.from !== from || r.classification !== "counted" || r.usdAtReceipt === null || r.stablecoinId === null)
      continue;
    const grade = grades.get(r.stablecoinId);
    if (grade === undefined) unavailable += r.usdAtReceipt;
    else if (QUALIFYING_GRADE.test(grade)) {
      qualifying += r.usdAtReceipt;
      assets.add(`${r.symbol ?? r.stablecoinId} on ${r.chain}`);
    }
  }
  const threshold = DONOR_MIN_USD - DONOR_USD_TOLERANCE;
  const outcome =
    qualifying >= threshold ? "eligible" : qualifying + unavailable >= threshold ? "grade_unavailable" : "ineligible";
  const cents = (x: number) => Math.round(x * 100) / 100;
  return {
    outcome,
    qualifyingUsd: cents(qualifying),
    unavailableUsd: cents(unavailable),
    countedAssets: [...assets].sort(),
  };
}

/**
 * viem, loaded on the first claim rather than at server start (its whole module graph costs about
 * 40 MB of resident memory, which a server that never sees a claim should not pay).
 */
const viem = () => Promise.all([import("viem"), import("viem/siwe")]).then(([core, siwe]) => ({ ...core, ...siwe }));

/** The canonical claim message for (address, nonce, issuedAt): the only text a claim may sign (byte for byte). */
export async function claimMessage(
  config: Pick<DonorClaimConfig, "domain" | "uri" | "chainId">,
  address: Address,
  nonce: string,
  issuedAt: Date,
): Promise<string> {
  const { createSiweMessage } = await viem();
  return createSiweMessage({
    domain: config.domain,
    address,
    statement: CLAIM_STATEMENT,
    uri: config.uri,
    version: "1",
    chainId: config.chainId,
    nonce,
    issuedAt,
    expirationTime: new Date(issuedAt.getTime() + CLAIM_MESSAGE_MAX_AGE_SEC * 1000),
  });
}

/** The claim body `{ message, signature }` (OpenAPI reads it; claims parse with it). */
export const ClaimBodyDoc = z
  .object({
    message: z.string().min(1).max(CLAIM_BODY_MAX_BYTES),
    signature: z.string().regex(/^0x[0-9a-fA-F]+$/, "expected 0x-prefixed hex"),
  })
  .strict();

/**
 * Parses and checks a claim message at wall time `nowSec`: EIP-4361, an address, a nonce of at least
 * 8 letters or digits, issued within 5 minutes of now, byte-equal to `claimMessage` for its address,
 * nonce and time (so domain, URI, statement, chain id and expiry are the configured ones), and not
 * expired (`validateSiweMessage`). Returns the address.
 * @throws ClaimError 400 `siwe_invalid`.
 */
export async function checkClaimMessage(config: DonorClaimConfig, message: string, nowSec: number): Promise<Address> {
  const { isAddress, parseSiweMessage, validateSiweMessage } = await viem();
  const invalid = (why: string) => new ClaimError(400, `Claim message or signature is invalid: ${why}`, "siwe_invalid");
  let parsed: ReturnType<typeof parseSiweMessage>;
  try {
    parsed = parseSiweMessage(message);
  } catch {
    throw invalid("not an EIP-4361 message");
  }
  if (!parsed.address || !isAddress(parsed.address)) throw invalid("no address");
  if (!parsed.nonce || !/^[A-Za-z0-9]{8,}$/.test(parsed.nonce))
    throw invalid("nonce must be at least 8 letters or digits");
  if (!parsed.issuedAt || Number.isNaN(parsed.issuedAt.getTime())) throw invalid("no issued-at time");
  if (Math.abs(nowSec - parsed.issuedAt.getTime() / 1000) > CLAIM_MESSAGE_MAX_AGE_SEC)
    throw invalid("issued more than 5 minutes from now");
  if (message !== (await claimMessage(config, parsed.address, parsed.nonce, parsed.issuedAt)))
    throw invalid(`not the claim message for ${config.domain}`);
  if (!validateSiweMessage({ message: parsed, domain: config.domain, time: new Date(nowSec * 1000) }))
    throw invalid("expired or not yet valid");
  return parsed.address;
}

/**
 * Checks that `signature` (0x-hex) is `address`'s personal_sign (EIP-191) signature of `message`: ECDSA
 * recovery through viem's `verifyMessage` (no ERC-1271), in the canonical 65-byte low-s form.
 * @throws ClaimError 400 `signature_invalid` otherwise.
 */
export async function checkClaimSignature(address: Address, message: string, signature: Hex): Promise<void> {
  const { verifyMessage, parseSignature } = await viem();
  let signed = false;
  try {
    signed = await verifyMessage({ address, message, signature });
  } catch {
    /* malformed signature */
  }
  if (!signed)
    throw new ClaimError(
      400,
      "Claim message or signature is invalid: the signature is not the address's",
      "signature_invalid",
    );
  if (!isCanonicalSignature(signature, parseSignature))
    throw new ClaimError(
      400,
      "Claim message or signature is invalid: the signature is not canonical (65 bytes, low s)",
      "signature_invalid",
    );
}

/** The ledger of the serving build. @throws ClaimError 503 `donations_ledger_invalid` when it is missing or fails its schema. */
async function ledgerOf(build: ServingBuild | null): Promise<DonationsLedgerPayload> {
  const path = donationsLedgerArtifact.outputs.main.path;
  try {
    const ledger = build?.files.has(path)
      ? await build.payload(path, (x) => DonationsLedgerSchema.parse(x))
      : undefined;
    if (ledger) return ledger;
  } catch {
    /* below */
  }
  throw new ClaimError(503, "Donations ledger unavailable", "donations_ledger_invalid", RETRY_60);
}

/** Current grades (coin id → grade) of the serving build. @throws ClaimError 503 `safety_scores_unavailable` when missing, corrupt or held. */
async function gradesOf(build: ServingBuild | null): Promise<Map<string, string>> {
  const path = safetyGradesArtifact.outputs.main.path;
  let payload: z.infer<typeof SafetyGradesPayloadSchema> | null = null;
  try {
    if (build?.files.has(path))
      payload = (await build.payload(path, (x) => SafetyGradesPayloadSchema.parse(x))) ?? null;
  } catch {
    /* below */
  }
  if (payload?.publication.status !== "published")
    throw new ClaimError(503, "Safety grades unavailable", "safety_scores_unavailable", RETRY_60);
  return new Map(payload.grades.filter((g) => g.publicationStatus === "published").map((g) => [g.id, g.grade]));
}

/** What a claim request brings: client IP, wall time (Unix s), the serving build and the body reader. */
export interface ClaimRequest {
  ip: string;
  wallNow: number;
  build: ServingBuild | null;
  readBody(maxBytes: number, extra?: Record<string, unknown>): Promise<Uint8Array>;
}

/** A 201 answer: the plaintext token once, with the key's public fields. */
export interface ClaimIssued {
  status: "issued";
  key: { keyPrefix: string; maskedToken: string; tier: "donor"; rateLimitPerMinute: number; expiresAt: null };
  token: string;
}

/**
 * Runs one claim, in the order of spec 5.3: closed switch; per-IP limit (before the body is read);
 * ledger; body (≤ 4096 bytes, `{ message, signature }`); message; signature (ECDSA recovery of a
 * canonical low-s signature); the message's first use (a message already presented is refused, so a
 * leaked body cannot be replayed); no account code when an RPC is configured; the wallet's existing claim (before grading: exists,
 * revoked, orphaned); grades; eligibility; pepper; issuance of key and claim in one statement.
 * Logs carry the outcome code only (never message, signature or address).
 * @throws ClaimError with the spec 7 status and reason on every failure.
 */
export async function claimDonorKey(deps: DonorClaimDeps, req: ClaimRequest): Promise<ClaimIssued> {
  try {
    const issued = await runClaim(deps, req);
    apiLog("info", "donor-claim", "claim", { outcome: "issued" });
    return issued;
  } catch (err) {
    if (err instanceof ClaimError) apiLog("info", "donor-claim", "claim", { outcome: err.reason });
    throw err;
  }
}

async function runClaim({ config, keys, limiter }: DonorClaimDeps, req: ClaimRequest): Promise<ClaimIssued> {
  if (!config.open) throw new ClaimError(403, "Supporter key claims are paused", "claims_closed");
  if (!limiter) throw new ClaimError(503, "Claim rate limiter is not configured", "rate_limiter_missing", RETRY_60);
  let limit: Awaited<ReturnType<KeyRateLimiter["consume"]>>;
  try {
    limit = await limiter.consume(`claim:${req.ip}`, CLAIM_ATTEMPTS_PER_MINUTE);
  } catch {
    throw new ClaimError(503, "Claim rate limiter unavailable", "rate_limit_unavailable", RETRY_60);
  }
  if (!limit.ok) throw new ClaimError(429, "Too many claim attempts from this address", "rate_limited", RETRY_60);
  const ledger = await ledgerOf(req.build);

  const bytes = await req.readBody(CLAIM_BODY_MAX_BYTES, { reason: "body_invalid" });
  let body: z.infer<typeof ClaimBodyDoc>;
  try {
    body = ClaimBodyDoc.parse(JSON.parse(Buffer.from(bytes).toString("utf8")));
  } catch (err) {
    const why =
      err instanceof z.ZodError ? `${err.issues[0]?.path.join(".") || "body"}: ${err.issues[0]?.message}` : "not JSON";
    throw new ClaimError(400, `Invalid claim body (${why}); expected { message, signature }`, "body_invalid");
  }
  const address = await checkClaimMessage(config, body.message, req.wallNow);
  await checkClaimSignature(address, body.message, body.signature as Hex);
  // Each signed message is used once, whatever its first attempt's outcome: a leaked body cannot be replayed.
  // A message is valid at most until now + 10 min (issued up to 5 min ahead, valid 5 min): kept that long.
  const expiresAt = Math.ceil(req.wallNow) + 2 * CLAIM_MESSAGE_MAX_AGE_SEC;
  const messageHash = createHash("sha256").update(body.message).digest("hex");
  if (!(await storeStep(() => keys.recordClaimMessage(messageHash, expiresAt, req.wallNow))))
    throw new ClaimError(
      400,
      "Claim message or signature is invalid: this message was already used; sign a new one",
      "siwe_invalid",
    );
  if (config.rpcUrl) await requireNoCode(config.rpcUrl, address);

  const wallet = address.toLowerCase();
  const existing = await storeStep(() => keys.donorClaim(wallet));
  if (existing) throw existingClaim(existing);
  const grades = await gradesOf(req.build);
  const e = donorEligibility(wallet, ledger, grades);
  if (e.outcome === "grade_unavailable")
    throw new ClaimError(503, "A grade needed to judge this claim is unavailable", "grade_unavailable", RETRY_60);
  if (e.outcome === "ineligible") {
    throw new ClaimError(
      403,
      `Not eligible: qualifying donations total USD ${e.qualifyingUsd.toFixed(2)} (at least USD ${DONOR_MIN_USD} needed)`,
      "ineligible",
      {},
      {
        ledgerUpdatedAt: ledger.reconciledAt,
        qualifyingUsd: e.qualifyingUsd,
        countedAssets: e.countedAssets,
      },
    );
  }
  if (!keys.hasPepper) throw new ClaimError(503, "Key issuance is not configured", "pepper_missing", RETRY_60);
  const issued = await storeStep(() => keys.issueDonorKey(wallet));
  if (issued === "conflict") {
    // A concurrent first claim won: answer as for an existing claim.
    const winner = await storeStep(() => keys.donorClaim(wallet));
    throw winner ? existingClaim(winner) : new ClaimError(503, "Key could not be issued", "issue_failed", RETRY_60);
  }
  const { record, token } = issued;
  return {
    status: "issued",
    key: {
      keyPrefix: record.keyPrefix,
      maskedToken: `bl_live_${record.keyPrefix}_…`,
      tier: "donor",
      rateLimitPerMinute: record.rateLimitPerMinute,
      expiresAt: null,
    },
    token,
  };
}

/** Half the order n of secp256k1: a canonical ECDSA signature has s ≤ n/2 (EIP-2). */
export const SECP256K1_HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/**
 * Whether `signature` is the canonical form personal_sign produces: 65 bytes (r, s, v) with s ≤ n/2.
 * ECDSA accepts (r, n − s) with the other v for the same key, which recovery (viem's `verifyMessage`)
 * does not refuse.
 */
function isCanonicalSignature(signature: Hex, parse: (s: Hex) => { s: Hex }): boolean {
  if (signature.length !== 132) return false;
  try {
    return BigInt(parse(signature).s) <= SECP256K1_HALF_ORDER;
  } catch {
    return false;
  }
}

/** The terminal answer for a wallet that already claimed (never auto-heals). */
function existingClaim(c: NonNullable<Awaited<ReturnType<KeyStore["donorClaim"]>>>): ClaimError {
  if (!c.key) return new ClaimError(409, "This wallet's claim has no key; contact the operator", "claim_orphaned");
  if (!c.key.isActive) return new ClaimError(403, "This wallet's key was revoked", "claim_revoked");
  return new ClaimError(409, "This wallet already claimed its key; re-signing never rotates it", "claim_exists");
}

/** A state-store step of a claim. @throws ClaimError 503 `issue_failed` when the store fails. */
async function storeStep<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch {
    throw new ClaimError(503, "Key could not be issued", "issue_failed", RETRY_60);
  }
}

/**
 * Refuses an address with code (a contract wallet, or an account delegated to code): `eth_getCode`
 * at the latest block over `rpcUrl` (5 s timeout).
 * @throws ClaimError 400 `signature_invalid` for an account with code; 503 `issue_failed` when the RPC does not answer.
 */
async function requireNoCode(rpcUrl: string, address: Address): Promise<void> {
  const { createPublicClient, http } = await viem();
  let code: Hex | undefined;
  try {
    code = await createPublicClient({ transport: http(rpcUrl, { timeout: 5000, retryCount: 1 }) }).getCode({ address });
  } catch {
    throw new ClaimError(503, "Could not check the account type", "issue_failed", RETRY_60);
  }
  if (code && code !== "0x")
    throw new ClaimError(
      400,
      "Claim message or signature is invalid: contract accounts cannot claim",
      "signature_invalid",
    );
}
