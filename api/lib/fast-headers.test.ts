import { describe, expect, it } from "vitest";
import { fastPathHeaders } from "./fast-headers.ts";

describe("fastPathHeaders (the Node fast path's request headers from rawHeaders)", () => {
  it("finds the five headers whatever their case and ignores the others", () => {
    const raw = [
      "Host",
      "127.0.0.1",
      "X-API-Key",
      "bl_live_k",
      "accept-encoding",
      "gzip, br",
      "ORIGIN",
      "https://example.org",
      "Accept",
      "*/*",
      "If-None-Match",
      '"abc"',
      "x-ballast-site-proxy-secret",
      "s3cret",
    ];
    expect(fastPathHeaders(raw)).toEqual({
      apiKey: "bl_live_k",
      acceptEncoding: "gzip, br",
      origin: "https://example.org",
      ifNoneMatch: '"abc"',
      siteProxySecret: "s3cret",
    });
    expect(fastPathHeaders(["Host", "h", "User-Agent", "wrk"])).toEqual({});
    // Names of the same lengths that differ in one character, and one in upper case.
    expect(fastPathHeaders(["X-API-Kez", "a", "Origim", "b", "If-None-Matcj", "c", "ACCEPT-ENCODING", "br"])).toEqual({
      acceptEncoding: "br",
    });
  });

  it("is null when one of them is sent twice (Node joins such values; the app path decides)", () => {
    expect(fastPathHeaders(["X-API-Key", "a", "x-api-key", "b"])).toBeNull();
    expect(fastPathHeaders(["Accept-Encoding", "gzip", "Accept-Encoding", "br"])).toBeNull();
  });
});
