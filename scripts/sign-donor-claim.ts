/**
 * Signs a donor key claim (spec 5.3) the way a wallet does, with viem: builds the EIP-4361 claim message
 * the server accepts (domain, statement, URI, version 1, chain id, a fresh nonce, `Issued At` now and
 * `Expiration Time` 5 minutes later) and signs it with `personal_sign` (EIP-191). Prints the request body
 * `{ message, signature }` of `POST /api/donor-key-claims`; with `--post` sends it and prints the answer
 * (201: the `donor` key, shown once).
 *
 * Usage (the private key of the donating wallet comes from the environment, never the command line):
 *   DONOR_PRIVATE_KEY=0x<64 hex> npx tsx scripts/sign-donor-claim.ts [--api http://127.0.0.1:8787]
 *     [--domain <DONOR_CLAIM_DOMAIN>] [--uri <DONOR_CLAIM_URI>] [--chain-id <DONOR_CLAIM_CHAIN_ID>] [--post]
 * Defaults mirror the server's: domain = host:port of `--api`, URI `http://<domain>/api/`, chain id 1.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createSiweMessage, generateSiweNonce } from "viem/siwe";

/** Statement of the claim message, word for word as the server's (api/lib/donor-claims.ts CLAIM_STATEMENT). */
const STATEMENT = "Claim your Ballast supporter API key. One key per wallet, no expiry, 10 requests per minute.";
/** Validity of a claim message: 5 minutes (spec 5.3). */
const VALID_SEC = 300;

/** What a claim message names; each must equal the server's DONOR_CLAIM_* setting. */
export interface ClaimTarget {
  /** EIP-4361 domain (DONOR_CLAIM_DOMAIN; server default `127.0.0.1:<PORT>`). */
  domain: string;
  /** EIP-4361 URI (DONOR_CLAIM_URI; server default `http://<domain>/api/`). */
  uri: string;
  /** EIP-4361 chain id (DONOR_CLAIM_CHAIN_ID; default 1). */
  chainId: number;
}

/** The body of `POST /api/donor-key-claims`. */
export interface SignedClaim {
  message: string;
  signature: Hex;
}

/**
 * Builds and signs the claim message of `privateKey`'s address for `target`, issued at `issuedAt`
 * (default now; the server takes it within 5 minutes of its clock) with `nonce` (default a fresh random
 * one; at least 8 letters or digits). A message is accepted once: sign a new one for each attempt.
 * @throws when `privateKey` is not 32 bytes of 0x-hex.
 */
export async function signDonorClaim(
  privateKey: Hex,
  target: ClaimTarget,
  opts: { issuedAt?: Date; nonce?: string } = {},
): Promise<SignedClaim> {
  const account = privateKeyToAccount(privateKey);
  const issuedAt = opts.issuedAt ?? new Date();
  const message = createSiweMessage({
    domain: target.domain,
    address: account.address,
    statement: STATEMENT,
    uri: target.uri,
    version: "1",
    chainId: target.chainId,
    nonce: opts.nonce ?? generateSiweNonce(),
    issuedAt,
    expirationTime: new Date(issuedAt.getTime() + VALID_SEC * 1000),
  });
  return { message, signature: await account.signMessage({ message }) };
}

/** The command line: signs, prints the body, and with `--post` sends it. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      api: { type: "string", default: "http://127.0.0.1:8787" },
      domain: { type: "string" },
      uri: { type: "string" },
      "chain-id": { type: "string", default: "1" },
      post: { type: "boolean", default: false },
    },
  });
  const privateKey = process.env.DONOR_PRIVATE_KEY;
  if (!privateKey || !/^0x[0-9a-fA-F]{64}$/.test(privateKey)) {
    console.error("Set DONOR_PRIVATE_KEY=0x<64 hex> (the donating wallet's private key)");
    process.exit(2);
  }
  const api = new URL(values.api);
  const domain = values.domain ?? api.host;
  const chainId = Number(values["chain-id"]);
  if (!Number.isInteger(chainId) || chainId < 1) {
    console.error("--chain-id must be a positive integer");
    process.exit(2);
  }
  const claim = await signDonorClaim(privateKey as Hex, {
    domain,
    uri: values.uri ?? `http://${domain}/api/`,
    chainId,
  });
  console.log(JSON.stringify(claim, null, 2));
  if (!values.post) return;
  const res = await fetch(new URL("/api/donor-key-claims", api), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(claim),
  });
  console.log(`HTTP ${res.status}`);
  console.log(await res.text());
  if (!res.ok) process.exitCode = 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
