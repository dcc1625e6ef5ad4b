/**
 * Issue 31 item 5: scripts/sign-donor-claim.ts (the runnable signing example of docs/writes.md) makes a claim
 * that the server's own checks accept: the message check and the signature check of api/lib/donor-claims.ts,
 * with the server's default claim settings for a port (api/server.ts donorClaimConfig). Keys: anvil's
 * well-known test accounts (public test vectors).
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { checkClaimMessage, checkClaimSignature } from "../../api/lib/donor-claims.ts";
import { donorClaimConfig } from "../../api/server.ts";
import { signDonorClaim } from "../../scripts/sign-donor-claim.ts";

const KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"; // anvil account 0
const OTHER = "0x59c6995e998f97a0a52a9ad6c1e2b9d93e7b5a1c3f3d8c8a8c0a1f5e1c7f6a3d"; // not anvil's: any valid key
const ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const root = fileURLToPath(new URL("../..", import.meta.url));

describe("scripts/sign-donor-claim.ts", () => {
  it("a claim it signs for the server's default settings passes the server's message and signature checks", async () => {
    const config = donorClaimConfig({ PORT: 9123 });
    const claim = await signDonorClaim(KEY, config);
    const now = Date.now() / 1000;
    const address = await checkClaimMessage(config, claim.message, now);
    expect(address).toBe(ADDRESS);
    await expect(checkClaimSignature(address, claim.message, claim.signature)).resolves.toBeUndefined();
  });

  it("the checks refuse it for another domain, another signer, or an altered message", async () => {
    const config = donorClaimConfig({ PORT: 9123 });
    const now = Date.now() / 1000;
    const elsewhere = await signDonorClaim(KEY, donorClaimConfig({ PORT: 9124 }));
    await expect(checkClaimMessage(config, elsewhere.message, now)).rejects.toMatchObject({ status: 400 });
    const claim = await signDonorClaim(KEY, config);
    const other = await signDonorClaim(OTHER as `0x${string}`, config);
    await expect(checkClaimSignature(ADDRESS, claim.message, other.signature)).rejects.toMatchObject({ status: 400 });
    const altered = claim.message.replace("Chain ID: 1", "Chain ID: 10");
    await expect(checkClaimSignature(ADDRESS, altered, claim.signature)).rejects.toMatchObject({ status: 400 });
    expect(privateKeyToAccount(OTHER as `0x${string}`).address).not.toBe(ADDRESS);
  });

  it("the command line prints a body the checks accept, for the domain of --api", async () => {
    const out = execFileSync("npx", ["tsx", "scripts/sign-donor-claim.ts", "--api", "http://127.0.0.1:9123"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, DONOR_PRIVATE_KEY: KEY },
    });
    const claim = JSON.parse(out) as { message: string; signature: `0x${string}` };
    const config = donorClaimConfig({ PORT: 9123 });
    const address = await checkClaimMessage(config, claim.message, Date.now() / 1000);
    await expect(checkClaimSignature(address, claim.message, claim.signature)).resolves.toBeUndefined();
  }, 60_000);
});
