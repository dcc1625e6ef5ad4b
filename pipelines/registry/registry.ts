import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Registry, RegistrySchema } from "./schema.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
/** Path of the committed registry data file. */
export const REGISTRY_PATH = join(HERE, "registry.json");

/** Loads and validates the committed registry (`pipelines/registry/registry.json`). Throws on schema failure. */
export function loadRegistry(path = REGISTRY_PATH): Registry {
  return RegistrySchema.parse(JSON.parse(readFileSync(path, "utf8")));
}
