/**
 * OG share images (spec 4.1 `/api/og/*`): PNGs rendered at build time from the build's own site-data
 * payloads (build/og) and published as build files. Declared here, once, so the build writes and the
 * API serves the same paths. Pure data: importing it loads no renderer.
 */

/** Feature name of the images: `503 Data not yet available: og-images` while a build lacks one. */
export const OG_FEATURE = "og-images";

/** Pixel size of every image (the usual 1.91:1 share-card size). */
export const OG_WIDTH = 1200;
export const OG_HEIGHT = 630;

/** Media type of every image. */
export const OG_MEDIA_TYPE = "image/png";

/**
 * Per-coin images are rendered for the largest coins only: the OG_STABLECOIN_LIMIT coins with the
 * highest current circulating supply (USD; ties by id) among those with a detail file and a summary
 * entry. Rendering costs ~0.1 s of CPU per image (satori + resvg in wasm); every listed coin (~290)
 * would add ~30 s to a ~55 s build. Other listed coins answer 503 `Data not yet available: og-images`.
 */
export const OG_STABLECOIN_LIMIT = 100;

/** The images by name: path under the build (`{id}` = stablecoin id) and what each shows. */
export const OG_IMAGES = {
  stablecoin: { path: "og/stablecoin/{id}.png", route: "/api/og/stablecoin/:stablecoinId" },
  "safety-scores": { path: "og/safety-scores.png", route: "/api/og/safety-scores" },
  depeg: { path: "og/depeg.png", route: "/api/og/depeg" },
  "stability-index": { path: "og/stability-index.png", route: "/api/og/stability-index" },
} as const;
export type OgImageName = keyof typeof OG_IMAGES;

/** Build path of image `name` (`id` required for `stablecoin`). Throws when a per-coin path has no id. */
export function ogPath(name: OgImageName, id?: string): string {
  const path: string = OG_IMAGES[name].path;
  if (!path.includes("{id}")) return path;
  if (id === undefined) throw new Error(`OG image ${name} needs an id`);
  return path.replace("{id}", id);
}
