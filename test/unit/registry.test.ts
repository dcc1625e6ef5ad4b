import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { chainIdForLabel, deriveCoinId, generateRegistry, slug } from "../../pipelines/registry/generate-registry.ts";
import { loadRegistry, REGISTRY_PATH } from "../../pipelines/registry/registry.ts";
import { StablecoinIdSchema } from "../../pipelines/registry/schema.ts";
import { CAPTURE_DIR } from "../helpers/build-once.ts";

describe("registry ids", () => {
  it("derives <ticker>-<issuer> without repeating the ticker", () => {
    expect(deriveCoinId("FRAX", "Frax")).toBe("frax-frax");
    expect(deriveCoinId("crvUSD", "Curve USD")).toBe("crvusd-curve-usd");
    expect(deriveCoinId("USD₮0", "USDT0")).toBe("usd-0-usdt0");
    expect(slug("Ünïcode  Dollar!")).toBe("unicode-dollar");
  });

  it("maps DefiLlama chain labels to registry slugs", () => {
    expect(chainIdForLabel("OP Mainnet")).toBe("optimism");
    expect(chainIdForLabel("BSC")).toBe("bsc");
    expect(chainIdForLabel("Arbitrum Nova")).toBe("arbitrum-nova");
  });

  it("committed registry equals what the generator makes from the recorded inputs (no drift)", () => {
    const generated = generateRegistry(CAPTURE_DIR);
    expect(JSON.parse(readFileSync(REGISTRY_PATH, "utf8"))).toEqual(generated);
  });

  it("has unique canonical ids covering every recorded DefiLlama coin, with curated ids and dead flags", () => {
    const reg = loadRegistry();
    const ids = reg.coins.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(StablecoinIdSchema.safeParse(id).success).toBe(true);
    const list = JSON.parse(readFileSync(`${CAPTURE_DIR}/zacheryglass-stablecoinwatch/defillama_raw_output.json`, "utf8")).peggedAssets as { id: string }[];
    const meta = JSON.parse(readFileSync(`${CAPTURE_DIR}/defillama-peggedassets-server/peggedData.json`, "utf8")) as { id: string }[];
    const llama = new Set(reg.coins.map((c) => c.llamaId));
    for (const a of [...list, ...meta]) expect(llama.has(a.id)).toBe(true);
    const byLlama = new Map(reg.coins.map((c) => [c.llamaId, c]));
    expect(byLlama.get("1")!.id).toBe("usdt-tether");
    expect(byLlama.get("2")!.id).toBe("usdc-circle");
    expect(byLlama.get("3")!.isDead).toBe(true);
    expect(reg.coins.find((c) => c.id === "usdt-tether")!.contracts.length).toBeGreaterThan(3);
  });
});
