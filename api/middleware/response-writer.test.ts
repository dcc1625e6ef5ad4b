import { describe, expect, it } from "vitest";
import { MIN_COMPRESS_BYTES } from "../lib/encoding.ts";
import type { CachedResponse } from "../lib/response-cache.ts";
import { codingFor, notModifiedHeaders, sentHeaderList, sentHeaders } from "./response-writer.ts";

const entry = (bytes: number, headers: Record<string, string> = {}): CachedResponse => ({
  buildId: "b",
  nowSec: 0,
  timeDependent: false,
  dataAsOf: null,
  headers: { "Content-Type": "application/json; charset=utf-8", ...headers },
  bodies: { identity: new Uint8Array(bytes), gzip: new Uint8Array(10) },
});

describe("response writer", () => {
  it("sends small bodies as identity and negotiates the coding of larger ones", () => {
    expect(codingFor(entry(MIN_COMPRESS_BYTES - 1), "gzip, br")).toBe("identity");
    expect(codingFor(entry(MIN_COMPRESS_BYTES), "gzip")).toBe("gzip");
    expect(codingFor(entry(MIN_COMPRESS_BYTES), undefined)).toBe("identity");
  });

  it("finished headers: CORS + entry headers + Content-Length (+ Content-Encoding), one object per CORS object and coding", () => {
    const e = entry(2000, { "Cache-Control": "public, max-age=60" });
    const cors = { "Access-Control-Allow-Origin": "https://a.example" };
    const plain = sentHeaders(e, cors, "identity", e.bodies.identity);
    expect(plain).toEqual({
      ...cors,
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "public, max-age=60",
      "Content-Length": "2000",
    });
    const gzip = e.bodies.gzip;
    if (!gzip) throw new Error("the fixture entry has a gzip body");
    const gz = sentHeaders(e, cors, "gzip", gzip);
    expect(gz).toMatchObject({ "Content-Encoding": "gzip", "Content-Length": "10" });
    expect(sentHeaders(e, cors, "identity", e.bodies.identity)).toBe(plain); // reused
    expect(sentHeaders(e, { ...cors }, "identity", e.bodies.identity)).not.toBe(plain); // another CORS object: made again
  });

  it("Node's flat header list: the same pairs as the object, in its order, made once per CORS object and coding", () => {
    const e = entry(2000, { "Cache-Control": "no-store" });
    const cors = { Vary: "Origin" };
    const list = sentHeaderList(e, cors, "identity", e.bodies.identity);
    expect(list).toEqual([
      "Vary",
      "Origin",
      "Content-Type",
      "application/json; charset=utf-8",
      "Cache-Control",
      "no-store",
      "Content-Length",
      "2000",
    ]);
    expect(sentHeaderList(e, cors, "identity", e.bodies.identity)).toBe(list);
    const gzip = e.bodies.gzip;
    if (!gzip) throw new Error("the fixture entry has a gzip body");
    expect(sentHeaderList(e, cors, "gzip", gzip)).toEqual([
      ...list.slice(0, 6),
      "Content-Encoding",
      "gzip",
      "Content-Length",
      "10",
    ]);
    expect(sentHeaderList(e, { Vary: "Origin" }, "identity", e.bodies.identity)).not.toBe(list);
  });

  it("304 headers only for a matching strong or weak ETag, without Content-Type", () => {
    const e = entry(10, { ETag: '"abc"' });
    expect(notModifiedHeaders(e, '"zzz", W/"abc"', { Vary: "Origin" })).toEqual({ Vary: "Origin", ETag: '"abc"' });
    expect(notModifiedHeaders(e, '"abc"', {})).toEqual({ ETag: '"abc"' });
    expect(notModifiedHeaders(e, '"zzz"', {})).toBeNull();
    expect(notModifiedHeaders(entry(10), '"abc"', {})).toBeNull();
  });
});
