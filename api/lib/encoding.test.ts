import { spawnSync } from "node:child_process";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { compressBody, stablePrefixDeflates } from "./encoding.ts";

/** A list body as the API renders it each second: the same rows, then a `_meta` of that second. */
function listBody(second: number, rows = 2000) {
  const stable = JSON.stringify({
    data: Array.from({ length: rows }, (_, i) => ({ id: `coin-${i}`, supply: i * 1.5 })),
  }).slice(0, -1);
  const text = `${stable},"_meta":${JSON.stringify({ now: second, dataAge: second - 100 })}}`;
  return { body: Buffer.from(text), bytes: Buffer.byteLength(stable) };
}

describe("compressBody, gzip with a stable prefix (a body whose _meta moves every second)", () => {
  it("gives a gzip member that gunzip and the gzip program both read back byte for byte, second after second", () => {
    for (const second of [1000, 1001, 1002]) {
      const { body, bytes } = listBody(second);
      const gz = compressBody(body, "gzip", { key: "list", bytes });
      expect(gunzipSync(gz).equals(body)).toBe(true);
      const cli = spawnSync("gzip", ["-dc"], { input: gz });
      expect(cli.status).toBe(0);
      expect(cli.stdout.equals(body)).toBe(true);
      // about as small as compressing the whole body at once
      expect(gz.byteLength).toBeLessThan(gzipSync(body, { level: 6 }).byteLength * 1.02 + 64);
    }
  });

  it("a different prefix under the same key (a new build) is compressed anew, not spliced onto the old one", () => {
    const a = listBody(1000, 2000);
    const b = listBody(1000, 1999);
    compressBody(a.body, "gzip", { key: "k", bytes: a.bytes });
    expect(gunzipSync(compressBody(b.body, "gzip", { key: "k", bytes: b.bytes })).equals(b.body)).toBe(true);
  });

  it("deflates the prefix once per key: the next second deflates only its tail", () => {
    const before = { ...stablePrefixDeflates };
    const { body, bytes } = listBody(1000);
    compressBody(body, "gzip", { key: "counted", bytes });
    const next = listBody(1001);
    expect(gunzipSync(compressBody(next.body, "gzip", { key: "counted", bytes: next.bytes })).equals(next.body)).toBe(
      true,
    );
    expect(stablePrefixDeflates.prefixes - before.prefixes).toBe(1);
    expect(stablePrefixDeflates.tails - before.tails).toBe(2);
  });
});
