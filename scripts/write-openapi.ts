import { writeFileSync } from "node:fs";
import { buildOpenApi } from "../api/openapi.ts";

// Regenerates api/openapi.json from the route declarations (a contract test fails on drift).
writeFileSync(new URL("../api/openapi.json", import.meta.url), `${JSON.stringify(buildOpenApi(), null, 2)}\n`);
process.stdout.write("wrote api/openapi.json\n");
