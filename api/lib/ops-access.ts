import { constants, createHash, createPublicKey, type JsonWebKey, type KeyObject, timingSafeEqual, verify as cryptoVerify } from "node:crypto";
import { HttpError } from "./http-error.ts";
import { apiLog, errorMessage } from "./log.ts";

/**
 * Operator-lane authentication (spec 5.6, 4.5, 7): an access-proxy JWT in `Cf-Access-Jwt-Assertion`
 * (signature against the configured JWKS, audience, issuer, expiry and not-before), or service-token
 * headers `CF-Access-Client-Id` / `CF-Access-Client-Secret` compared in constant time. Mutations also
 * need `X-Ballast-Admin: 1` and, when the request carries an Origin (the operator site's same-origin
 * proxy), an Origin on the configured allowlist.
 *
 * The JWT verifier is built on node:crypto (JWK import and signature verification) because `jose` is
 * not installed in this checkout; {@link AccessJwtVerifier} is the one seam to swap for
 * `jose.jwtVerify(token, createRemoteJWKSet(url), { audience, issuer, algorithms })`.
 */

/** Who passed the operator check: an access-proxy identity (JWT `email`/`sub`) or a service token id. */
export interface OperatorIdentity {
  kind: "access-jwt" | "service-token";
  /** `email` claim, else `sub` (JWT); the client id (service token). Safe to log. */
  subject: string;
}

/** Settings of the operator lane; a method without its settings is off. */
export interface OperatorAccessConfig {
  /** JWKS of the access proxy (`https://<team>.cloudflareaccess.com/cdn-cgi/access/certs`). */
  jwksUrl?: string;
  /** Accepted audiences (the access application's AUD tag); the token's `aud` must contain one. */
  audiences?: string[];
  /** Exact `iss` (`https://<team>.cloudflareaccess.com`). */
  issuer?: string;
  /** Service token for direct calls (both or neither). */
  serviceTokenId?: string;
  serviceTokenSecret?: string;
  /** Origins the operator site proxies from; a mutation carrying another Origin is 403. */
  allowedOrigins?: string[];
  /** Clock skew tolerated on `exp`/`nbf` (s); default 5. */
  clockToleranceSec?: number;
  /** Deadline of one JWKS fetch (ms); default 3000. */
  jwksTimeoutMs?: number;
  /** How long a fetched key set is used before it is fetched again (ms); default 10 min. */
  jwksCacheMs?: number;
  /** Wall clock (ms). */
  nowMs?: () => number;
}

/** Whether `cfg` turns the operator lane on: a complete JWT setting (JWKS, audience, issuer) or a service token. */
export function operatorLaneConfigured(cfg: OperatorAccessConfig): boolean {
  return Boolean((cfg.jwksUrl && cfg.audiences?.length && cfg.issuer) || (cfg.serviceTokenId && cfg.serviceTokenSecret));
}

/** The JWKS could not be fetched or parsed and no usable key set is cached: the operator call answers 502. */
export class JwksUnavailableError extends Error {
  override readonly name = "JwksUnavailableError";
}

/** A presented JWT failed verification; `reason` is logged, never sent. */
export class JwtInvalidError extends Error {
  override readonly name = "JwtInvalidError";
}

/** Header names of the operator lane. */
export const ACCESS_JWT_HEADER = "Cf-Access-Jwt-Assertion";
export const SERVICE_TOKEN_ID_HEADER = "CF-Access-Client-Id";
export const SERVICE_TOKEN_SECRET_HEADER = "CF-Access-Client-Secret";
export const ADMIN_HEADER = "X-Ballast-Admin";

/** Signature algorithms accepted, by JWK key type: RSA PKCS#1 v1.5 and PSS, ECDSA (Cloudflare Access signs RS256). */
const ALGORITHMS: Record<string, { kty: string; hash: string; pss?: boolean; crv?: string }> = {
  RS256: { kty: "RSA", hash: "sha256" }, RS384: { kty: "RSA", hash: "sha384" }, RS512: { kty: "RSA", hash: "sha512" },
  PS256: { kty: "RSA", hash: "sha256", pss: true }, PS384: { kty: "RSA", hash: "sha384", pss: true }, PS512: { kty: "RSA", hash: "sha512", pss: true },
  ES256: { kty: "EC", hash: "sha256", crv: "P-256" }, ES384: { kty: "EC", hash: "sha384", crv: "P-384" }, ES512: { kty: "EC", hash: "sha512", crv: "P-521" },
};

/** PSS salt length = digest length (RFC 7518 3.5). */
const SALT_BYTES: Record<string, number> = { sha256: 32, sha384: 48, sha512: 64 };

type Jwk = JsonWebKey & { kid?: string; alg?: string; use?: string; kty?: string; crv?: string };

const b64json = (part: string): Record<string, unknown> => {
  const v = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new JwtInvalidError("segment is not a JSON object");
  return v as Record<string, unknown>;
};

/**
 * Verifies access-proxy JWTs against a remote JWKS: the key set is fetched on first use, kept for
 * `jwksCacheMs`, fetched again at most every 30 s when a token names an unknown `kid`, and a stale set
 * keeps serving while a refetch fails. Only asymmetric algorithms whose key type matches the JWK
 * (`alg: none` and HMAC are refused).
 */
export class AccessJwtVerifier {
  private keys: { at: number; byKid: Map<string, Jwk>; all: Jwk[] } | null = null;
  private fetching: Promise<void> | null = null;
  private lastForcedMs = -Infinity;
  private readonly imported = new Map<string, KeyObject>();

  constructor(private readonly cfg: Required<Pick<OperatorAccessConfig, "jwksUrl" | "audiences" | "issuer">> & OperatorAccessConfig) {}

  private now(): number {
    return (this.cfg.nowMs ?? Date.now)();
  }

  /**
   * The claims of a valid token.
   * @throws JwtInvalidError (401) on any failed check; JwksUnavailableError (502) when no key set can be had.
   */
  async verify(token: string): Promise<Record<string, unknown>> {
    const parts = token.split(".");
    if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p)) || !parts[0] || !parts[1] || !parts[2]) throw new JwtInvalidError("not a compact JWS");
    let header: Record<string, unknown>, claims: Record<string, unknown>;
    try {
      header = b64json(parts[0]);
      claims = b64json(parts[1]);
    } catch {
      throw new JwtInvalidError("undecodable header or payload");
    }
    const alg = typeof header.alg === "string" ? header.alg : "";
    const spec = Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined;
    if (!spec) throw new JwtInvalidError(`algorithm ${alg || "(none)"} not accepted`);
    if (header.crit !== undefined) throw new JwtInvalidError("crit header not supported");
    const kid = typeof header.kid === "string" ? header.kid : undefined;
    const jwk = await this.keyFor(kid, spec.kty);
    if (jwk.alg !== undefined && jwk.alg !== alg) throw new JwtInvalidError("token algorithm differs from the key's");
    if (jwk.use !== undefined && jwk.use !== "sig") throw new JwtInvalidError("key is not a signing key");
    if (spec.crv && jwk.crv !== spec.crv) throw new JwtInvalidError("curve does not match the algorithm");
    const key = this.publicKey(jwk);
    const data = Buffer.from(`${parts[0]}.${parts[1]}`);
    const signature = Buffer.from(parts[2], "base64url");
    const ok = spec.kty === "EC"
      ? cryptoVerify(spec.hash, data, { key, dsaEncoding: "ieee-p1363" }, signature)
      : cryptoVerify(spec.hash, data, spec.pss ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: SALT_BYTES[spec.hash] } : key, signature);
    if (!ok) throw new JwtInvalidError("bad signature");
    this.checkClaims(claims);
    return claims;
  }

  private checkClaims(c: Record<string, unknown>): void {
    const now = Math.floor(this.now() / 1000);
    const tol = this.cfg.clockToleranceSec ?? 5;
    if (typeof c.exp !== "number" || !Number.isFinite(c.exp)) throw new JwtInvalidError("exp missing");
    if (c.exp <= now - tol) throw new JwtInvalidError("expired");
    if (c.nbf !== undefined && (typeof c.nbf !== "number" || c.nbf > now + tol)) throw new JwtInvalidError("not yet valid");
    if (c.iss !== this.cfg.issuer) throw new JwtInvalidError("wrong issuer");
    const aud = typeof c.aud === "string" ? [c.aud] : Array.isArray(c.aud) ? c.aud.filter((a): a is string => typeof a === "string") : [];
    if (!aud.some((a) => this.cfg.audiences.includes(a))) throw new JwtInvalidError("wrong audience");
  }

  private publicKey(jwk: Jwk): KeyObject {
    const id = createHash("sha256").update(JSON.stringify([jwk.kty, jwk.n, jwk.e, jwk.crv, jwk.x, jwk.y])).digest("hex");
    let k = this.imported.get(id);
    if (!k) {
      try {
        k = createPublicKey({ key: { kty: jwk.kty, n: jwk.n, e: jwk.e, crv: jwk.crv, x: jwk.x, y: jwk.y } as JsonWebKey, format: "jwk" });
      } catch {
        throw new JwtInvalidError("key in the JWKS cannot be imported");
      }
      if (k.type !== "public") throw new JwtInvalidError("JWKS key is not a public key");
      if (this.imported.size > 64) this.imported.clear();
      this.imported.set(id, k);
    }
    return k;
  }

  /** The key for `kid` (or the only key of the right type when the token names none). */
  private async keyFor(kid: string | undefined, kty: string): Promise<Jwk> {
    const cacheMs = this.cfg.jwksCacheMs ?? 600_000;
    if (!this.keys || this.now() - this.keys.at > cacheMs) await this.refresh(!this.keys);
    const pick = () => {
      if (!this.keys) return undefined;
      if (kid !== undefined) return this.keys.byKid.get(kid);
      const ofType = this.keys.all.filter((k) => k.kty === kty);
      return ofType.length === 1 ? ofType[0] : undefined;
    };
    let jwk = pick();
    if (!jwk && this.now() - this.lastForcedMs > 30_000) {
      this.lastForcedMs = this.now();
      await this.refresh(false);
      jwk = pick();
    }
    if (!jwk) throw new JwtInvalidError(kid === undefined ? "token names no kid and the JWKS has several keys" : "unknown kid");
    if (jwk.kty !== kty) throw new JwtInvalidError("key type does not match the algorithm");
    return jwk;
  }

  /** Fetches the key set (single flight). A failure throws only when `required` (nothing cached), else keeps the stale set. */
  private async refresh(required: boolean): Promise<void> {
    this.fetching ??= this.fetchKeys().finally(() => { this.fetching = null; });
    try {
      await this.fetching;
    } catch (err) {
      if (required || !this.keys) throw new JwksUnavailableError(`access JWKS unavailable: ${errorMessage(err)}`);
      apiLog("warn", "ops", "access JWKS refetch failed; the cached key set keeps serving", { error: errorMessage(err) });
    }
  }

  private async fetchKeys(): Promise<void> {
    const res = await fetch(this.cfg.jwksUrl, { signal: AbortSignal.timeout(this.cfg.jwksTimeoutMs ?? 3000), headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`JWKS answered HTTP ${res.status}`);
    const body = (await res.json()) as { keys?: unknown };
    if (!Array.isArray(body?.keys)) throw new Error("JWKS has no keys array");
    const all = body.keys.filter((k): k is Jwk => !!k && typeof k === "object" && typeof (k as Jwk).kty === "string");
    if (all.length === 0) throw new Error("JWKS holds no usable key");
    this.keys = { at: this.now(), all, byKid: new Map(all.filter((k) => typeof k.kid === "string").map((k) => [k.kid!, k])) };
  }
}

/** Constant-time string comparison (lengths leak, contents do not). */
function sameSecret(expected: string, given: string): boolean {
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(given).digest();
  return timingSafeEqual(a, b) && expected.length === given.length;
}

/** Minimal header access of a request. */
export interface HeaderSource {
  header(name: string): string | undefined;
}

const UNAUTHORIZED = "Unauthorized: operator access required (Cf-Access-Jwt-Assertion or service token)";

/**
 * The operator lane's checks. `authenticate` before anything else (401/502), then `checkMutation` on
 * mutating routes (403). Failures are logged with their reason, never with the presented secret.
 */
export class OperatorAuth {
  private readonly jwt: AccessJwtVerifier | null;

  constructor(private readonly cfg: OperatorAccessConfig) {
    this.jwt = cfg.jwksUrl && cfg.audiences?.length && cfg.issuer
      ? new AccessJwtVerifier({ ...cfg, jwksUrl: cfg.jwksUrl, audiences: cfg.audiences, issuer: cfg.issuer })
      : null;
  }

  /** Whether any method is configured (the operator listener starts only then). */
  get configured(): boolean {
    return operatorLaneConfigured(this.cfg);
  }

  /**
   * The operator presenting `req`: a JWT when the assertion header is present (an invalid one is 401,
   * never a fallback to the service token), else the service-token pair.
   * @throws HttpError 401 (missing or invalid credentials), 502 (JWKS unavailable).
   */
  async authenticate(req: HeaderSource): Promise<OperatorIdentity> {
    const assertion = req.header(ACCESS_JWT_HEADER)?.trim();
    if (assertion) {
      if (!this.jwt) throw this.deny("access JWT presented but no JWKS/audience/issuer is configured");
      try {
        const claims = await this.jwt.verify(assertion);
        const subject = typeof claims.email === "string" ? claims.email : typeof claims.sub === "string" ? claims.sub : "unknown";
        return { kind: "access-jwt", subject };
      } catch (err) {
        if (err instanceof JwksUnavailableError) {
          apiLog("error", "ops", "operator request refused: access JWKS unavailable", { error: err.message });
          throw new HttpError(502, "Access verification unavailable: the JWKS could not be fetched");
        }
        if (err instanceof JwtInvalidError) throw this.deny(`access JWT rejected: ${err.message}`);
        throw err;
      }
    }
    const id = req.header(SERVICE_TOKEN_ID_HEADER);
    const secret = req.header(SERVICE_TOKEN_SECRET_HEADER);
    if (id !== undefined || secret !== undefined) {
      const { serviceTokenId, serviceTokenSecret } = this.cfg;
      if (!serviceTokenId || !serviceTokenSecret) throw this.deny("service token presented but none is configured");
      // Both comparisons always run, so timing tells nothing about which part was wrong.
      const idOk = sameSecret(serviceTokenId, id ?? "");
      const secretOk = sameSecret(serviceTokenSecret, secret ?? "");
      if (!idOk || !secretOk) throw this.deny("service token rejected");
      return { kind: "service-token", subject: serviceTokenId };
    }
    throw this.deny("no operator credentials");
  }

  /**
   * Mutation checks (spec 4.5): `X-Ballast-Admin: 1`, and an Origin, when present, on the allowlist.
   * @throws HttpError 403.
   */
  checkMutation(req: HeaderSource): void {
    if (req.header(ADMIN_HEADER)?.trim() !== "1") throw new HttpError(403, "Forbidden: mutating operator requests need X-Ballast-Admin: 1");
    const origin = req.header("Origin");
    if (origin !== undefined && !(this.cfg.allowedOrigins ?? []).includes(origin)) throw new HttpError(403, "Forbidden: Origin not allowed for operator mutations");
  }

  /** Whether `origin` may call the operator lane from a browser (preflights). */
  originAllowed(origin: string): boolean {
    return (this.cfg.allowedOrigins ?? []).includes(origin);
  }

  private deny(reason: string): HttpError {
    apiLog("warn", "ops", "operator request refused", { reason });
    return new HttpError(401, UNAUTHORIZED);
  }
}
