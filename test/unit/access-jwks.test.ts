import { afterEach, describe, expect, it } from "vitest";
import { AccessJwtVerifier, JwksUnavailableError, JwtInvalidError } from "../../api/lib/ops-access.ts";
import { type JwksServer, signJwt, startJwksServer } from "../helpers/ops.ts";

/**
 * The access-proxy key set when its endpoint hangs (issue 30 item 1): a token whose `kid` the last
 * good set holds never waits on the endpoint, and concurrent requests share one fetch.
 */

const AUD = "aud-tag-0123";
const ISS = "https://team.cloudflareaccess.com";
const claims = () => ({ aud: [AUD], iss: ISS, sub: "op", exp: Math.floor(Date.now() / 1000) + 600 });
/** The endpoint hangs for a minute per fetch: only the last good set can answer in time. */
const HUNG_FETCH_MS = 60_000;

let jwks: JwksServer | null = null;
afterEach(async () => {
  await jwks?.close();
  jwks = null;
});

/** Resolves once the JWKS server has received `n` requests. */
async function hitsReach(server: JwksServer, n: number) {
  while (server.hits < n) await new Promise((r) => setTimeout(r, 10));
}

describe("access JWKS with a hung endpoint", () => {
  it("a known kid answers from the last good set while a stale set is refreshed in the background", async () => {
    const server = await startJwksServer();
    jwks = server;
    const verifier = new AccessJwtVerifier({
      jwksUrl: server.url,
      audiences: [AUD],
      issuer: ISS,
      jwksCacheMs: 1, // stale at once: every later request finds the set due for a refresh
      jwksTimeoutMs: HUNG_FETCH_MS,
    });
    const token = signJwt(server.privateKey, claims(), { kid: server.kid });
    expect((await verifier.verify(token)).sub).toBe("op");
    expect(server.hits).toBe(1);
    server.hang = true;
    await new Promise((r) => setTimeout(r, 5)); // past jwksCacheMs
    // Before the change each of these waited for the hung refetch (a minute).
    expect((await verifier.verify(token)).sub).toBe("op");
    await hitsReach(server, 2); // the background refresh reached the endpoint and hangs there
    expect((await verifier.verify(token)).sub).toBe("op");
    expect(server.hits).toBe(2); // one refresh in flight, shared
  });

  it("N concurrent unknown-kid requests make one fetch; a known kid meanwhile answers at once", async () => {
    const server = await startJwksServer();
    jwks = server;
    const verifier = new AccessJwtVerifier({
      jwksUrl: server.url,
      audiences: [AUD],
      issuer: ISS,
      jwksCooldownMs: 0,
      jwksTimeoutMs: 1000,
    });
    const known = signJwt(server.privateKey, claims(), { kid: server.kid });
    await verifier.verify(known);
    server.hang = true;
    const unknown = signJwt(server.privateKey, claims(), { kid: "rotated-key" });
    const waiting = Array.from({ length: 10 }, () => verifier.verify(unknown).catch((e: unknown) => e));
    await hitsReach(server, 2);
    expect((await verifier.verify(known)).sub).toBe("op");
    const errors = await Promise.all(waiting);
    for (const e of errors) expect(e).toBeInstanceOf(JwksUnavailableError); // the shared fetch timed out: 502
    expect(server.hits).toBe(2);

    // Before any set is fetched: concurrent requests share the first fetch too.
    server.hang = false;
    const fresh = new AccessJwtVerifier({ jwksUrl: server.url, audiences: [AUD], issuer: ISS });
    const results = await Promise.all(Array.from({ length: 10 }, () => fresh.verify(known)));
    expect(results.every((c) => c.sub === "op")).toBe(true);
    expect(server.hits).toBe(3);
    // An unknown kid within the cooldown is refused (401) without a fetch.
    await expect(fresh.verify(unknown)).rejects.toBeInstanceOf(JwtInvalidError);
    expect(server.hits).toBe(3);
  });
});
