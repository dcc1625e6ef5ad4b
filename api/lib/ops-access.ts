import { createHash, timingSafeEqual } from "node:crypto";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  type ExportedJWKSCache,
  errors as joseErrors,
  type JWTVerifyGetKey,
  jwksCache,
  jwtVerify,
} from "jose";
import { HttpError } from "./http-error.ts";
import { apiLog, errorMessage } from "./log.ts";
import { must } from "../../lib/must.ts";

/**
 * Operator-lane authentication (spec 5.6, 4.5, 7): an access-proxy JWT in `Cf-Access-Jwt-Assertion`
 * (signature against the configured JWKS, audience, issuer, expiry and not-before), or service-token
 * headers `CF-Access-Client-Id` / `CF-Access-Client-Secret` compared in constant time. Mutations also
 * need `X-Ballast-Admin: 1` and, when the request carries an Origin (the operator site's same-origin
 * proxy), an Origin on the configured allowlist.
 * The JWT is verified with `jose` (AccessJwtVerifier).
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
  /** How long a fetched key set is used before it is fetched again, in the background (ms); default 10 min. */
  jwksCacheMs?: number;
  /** Least time between a successful fetch and a refetch for an unknown `kid` (ms); default 30 s. */
  jwksCooldownMs?: number;
  /** Wall clock (ms). */
  nowMs?: () => number;
}

/** Whether `cfg` turns the operator lane on: a complete JWT setting (JWKS, audience, issuer) or a service token. */
export function operatorLaneConfigured(cfg: OperatorAccessConfig): boolean {
  return Boolean(
    (cfg.jwksUrl && cfg.audiences?.length && cfg.issuer) || (cfg.serviceTokenId && cfg.serviceTokenSecret),
  );
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

/** Signature algorithms accepted: asymmetric only (Cloudflare Access signs RS256); `none` and HMAC are refused. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"];

/** jose errors that mean the key set could not be had (502), as opposed to a token that failed a check (401). */
const JWKS_FAILURES = new Set(["ERR_JWKS_TIMEOUT", "ERR_JWKS_INVALID"]);

/**
 * Verifies access-proxy JWTs with `jose`: `jwtVerify` against the access proxy's key set, checking
 * signature, `aud`, `iss`, `exp` and `nbf` (with `clockToleranceSec`), asymmetric algorithms only.
 *
 * The key set (`createRemoteJWKSet`, one fetch in flight shared by every waiting request) is fetched on
 * first use. Afterwards a token whose `kid` the last good set holds is verified against that set at
 * once, never waiting on the JWKS endpoint: a set older than `jwksCacheMs` is refreshed in the
 * background (a failed refresh is logged and the last good set stays in use). A token with an
 * unknown `kid` waits for one refetch (at most every `jwksCooldownMs`, the shared in-flight fetch) and fails
 * with 401 if the key is still missing.
 */
export class AccessJwtVerifier {
  private readonly remote: ReturnType<typeof createRemoteJWKSet>;
  /** The last good key set, written by the remote set on every successful fetch. */
  private readonly fetched: ExportedJWKSCache | Record<string, never> = {};
  private local: { uat: number; getKey: ReturnType<typeof createLocalJWKSet> } | null = null;
  private readonly getKey: JWTVerifyGetKey;

  constructor(
    private readonly cfg: Required<Pick<OperatorAccessConfig, "jwksUrl" | "audiences" | "issuer">> &
      OperatorAccessConfig,
  ) {
    this.remote = createRemoteJWKSet(new URL(cfg.jwksUrl), {
      timeoutDuration: cfg.jwksTimeoutMs ?? 3000,
      cooldownDuration: cfg.jwksCooldownMs ?? 30_000,
      cacheMaxAge: cfg.jwksCacheMs ?? 600_000,
      headers: { Accept: "application/json" },
      [jwksCache]: this.fetched,
    });
    this.getKey = (header, token) => this.keyFor(header, token);
  }

  /** The key of a token: from the last good set when it holds the `kid` (stale: refreshed in the background), else the remote set. */
  private async keyFor(...args: Parameters<JWTVerifyGetKey>) {
    const last = this.lastGood();
    if (!last) return this.remote(...args);
    if (!this.remote.fresh && !this.remote.reloading)
      this.remote.reload().catch((err: unknown) => {
        apiLog("warn", "ops", "access JWKS refresh failed; the last good key set stays in use", {
          error: errorMessage(err),
        });
      });
    try {
      return await last(...args);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || this.remote.coolingDown) throw err;
      await this.remote.reload();
      return must(this.lastGood(), "the fetched key set")(...args);
    }
  }

  /** A local key set over the last good fetch (rebuilt when a fetch replaced it); null before the first. */
  private lastGood() {
    const { uat, jwks } = this.fetched as Partial<ExportedJWKSCache>;
    if (uat === undefined || !jwks) return null;
    if (this.local?.uat !== uat) this.local = { uat, getKey: createLocalJWKSet(jwks) };
    return this.local.getKey;
  }

  /**
   * The claims of a valid token.
   * @throws JwtInvalidError (401) on any failed check; JwksUnavailableError (502) when the key set cannot be fetched.
   */
  async verify(token: string): Promise<Record<string, unknown>> {
    try {
      const { payload } = await jwtVerify(token, this.getKey, {
        audience: this.cfg.audiences,
        issuer: this.cfg.issuer,
        algorithms: ALGORITHMS,
        clockTolerance: this.cfg.clockToleranceSec ?? 5,
        currentDate: new Date((this.cfg.nowMs ?? Date.now)()),
        requiredClaims: ["exp"],
      });
      return payload as Record<string, unknown>;
    } catch (err) {
      const code = (err as { code?: string }).code;
      // A JOSE error about the token is a 401; a failed fetch of the key set (network, timeout, non-200, not a JWKS) is a 502.
      if (
        err instanceof joseErrors.JOSEError &&
        !JWKS_FAILURES.has(code ?? "") &&
        !(code === "ERR_JOSE_GENERIC" && /JSON Web Key Set/.test(err.message))
      ) {
        throw new JwtInvalidError(`${code ?? "invalid"}: ${err.message}`);
      }
      throw new JwksUnavailableError(`access JWKS unavailable: ${errorMessage(err)}`);
    }
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
    this.jwt =
      cfg.jwksUrl && cfg.audiences?.length && cfg.issuer
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
        const subject =
          typeof claims.email === "string" ? claims.email : typeof claims.sub === "string" ? claims.sub : "unknown";
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
    if (req.header(ADMIN_HEADER)?.trim() !== "1")
      throw new HttpError(403, "Forbidden: mutating operator requests need X-Ballast-Admin: 1");
    const origin = req.header("Origin");
    if (origin !== undefined && !(this.cfg.allowedOrigins ?? []).includes(origin))
      throw new HttpError(403, "Forbidden: Origin not allowed for operator mutations");
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
