import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Registry, RegistrySchema } from "./schema.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
/** Path of the committed registry data file. */
export const REGISTRY_PATH = join(HERE, "registry.json");

/**
 * Validates a parsed registry. Throws listing every problem; a problem inside a coin names the coin
 * id and the field (`registry.json: usdc-circle: risk.custodyModel: …`).
 */
export function parseRegistry(data: unknown, label = "registry.json"): Registry {
  const parsed = RegistrySchema.safeParse(data);
  if (parsed.success) return parsed.data;
  const coins =
    data && typeof data === "object" && Array.isArray((data as { coins?: unknown }).coins)
      ? (data as { coins: unknown[] }).coins
      : [];
  const problems = parsed.error.issues.map((issue) => {
    const [head, index, ...rest] = issue.path;
    if (head === "coins" && typeof index === "number") {
      const rec = coins[index] as { id?: unknown } | undefined;
      const id = typeof rec?.id === "string" ? rec.id : `coins.${index}`;
      return `${id}: ${rest.join(".") || "(record)"}: ${issue.message}`;
    }
    return `${issue.path.join(".") || "(root)"}: ${issue.message}`;
  });
  throw new Error(`${label}: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
}

/** Loads and validates the committed registry (`pipelines/registry/registry.json`). Throws on schema failure, naming coin and field. */
export function loadRegistry(path = REGISTRY_PATH): Registry {
  return parseRegistry(JSON.parse(readFileSync(path, "utf8")), path);
}
