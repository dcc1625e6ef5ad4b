import type { BuildManifest } from "../../site-data/manifest.ts";
import { check } from "./causes.ts";
import type { Check, NotYetAvailable } from "./types.ts";

/**
 * Features no build publishes yet (without effect on status), one note each naming the routes that
 * answer 503 `Data not yet available: <feature>`. `notYetAvailable` is the route table's view
 * (HealthOptions.notYetAvailable, given by the caller so health does not import the route table),
 * asked with the paths of the build's files; without it nothing is reported.
 */
export function notYetAvailableCheck(
  m: Pick<BuildManifest, "files">,
  notYetAvailable: NotYetAvailable | undefined,
): Check {
  if (!notYetAvailable) return check(undefined);
  const features = notYetAvailable(new Set(m.files.map((f) => f.path)));
  return check(undefined, {
    notes: Object.entries(features).map(
      ([feature, paths]) =>
        `not yet available (no effect on status): ${feature} — no build publishes it yet; ${paths.join(", ")} answer${paths.length === 1 ? "s" : ""} 503 \`Data not yet available: ${feature}\`.`,
    ),
  });
}
