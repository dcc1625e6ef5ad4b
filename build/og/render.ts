import { ImageResponse } from "@vercel/og";
import { OG_HEIGHT, OG_WIDTH } from "../../site-data/og-images.ts";

/** A satori element: a React-element-shaped object (`type`, `props`), no React needed. */
export interface OgNode {
  type: string;
  props: Record<string, unknown> & { children?: OgChild | OgChild[] };
}
export type OgChild = OgNode | string | number | null | false | undefined;
export type Style = Record<string, string | number>;

/** Characters the bundled font draws: printable ASCII, Latin-1, Latin Extended-A and a little punctuation. */
const DRAWABLE = /[^\u0020-\u007E\u00A0-\u017F\u2013\u2014\u2018\u2019\u201C\u201D\u2022\u2026\u20AC\u2212]/gu;

/**
 * `text` with every character the bundled font lacks (CJK, emoji, …) replaced by `?`: satori would
 * otherwise fetch a font or emoji image for it, and rendering never uses the network.
 */
export function drawable(text: string): string {
  return text.replace(DRAWABLE, "?");
}

/**
 * Element `type` with `style` and children. A `div` is `display: flex` unless the style says
 * otherwise (satori lays out flex boxes only); falsy children are dropped; text goes through `drawable`.
 */
export function h(type: string, style: Style, ...children: OgChild[]): OgNode {
  const kids = children
    .filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (typeof c === "string" ? drawable(c) : c));
  const s = type === "div" ? { display: "flex", ...style } : style;
  return { type, props: { style: s, ...(kids.length === 0 ? {} : { children: kids.length === 1 ? kids[0] : kids }) } };
}

/** An `svg`/`path`/… element with plain attributes (no style). */
export function svg(type: string, attrs: Record<string, string | number>, ...children: OgNode[]): OgNode {
  return { type, props: { ...attrs, ...(children.length ? { children } : {}) } };
}

/**
 * Renders `root` to a PNG of OG_WIDTH × OG_HEIGHT pixels with @vercel/og (satori + resvg wasm) and its
 * bundled Geist Regular font. Deterministic: the same tree gives the same bytes. Network is blocked
 * while rendering (inlined `data:` URLs excepted): satori asks the network for glyphs its font lacks (and for emoji); those requests
 * are refused, so such characters are drawn without a glyph rather than downloaded. Returns the PNG
 * bytes and the URLs that were refused (empty when every glyph was in the font).
 */
export async function renderPng(root: OgNode): Promise<{ png: Uint8Array; refused: string[] }> {
  const refused: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    // The wasm modules are inlined as data: URLs (no network); anything else is refused.
    if (url.startsWith("data:")) return realFetch(input, init);
    refused.push(url);
    throw new Error("network is not used while rendering OG images");
  }) as typeof fetch;
  try {
    // The element type is React's; a plain element-shaped object is what satori reads.
    const res = new ImageResponse(root as unknown as ConstructorParameters<typeof ImageResponse>[0], {
      width: OG_WIDTH,
      height: OG_HEIGHT,
    });
    const png = new Uint8Array(await res.arrayBuffer());
    return { png, refused };
  } finally {
    globalThis.fetch = realFetch;
  }
}
