import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { DEMO_SOURCE, DEMO_STAGING } from "../helpers/demo-source.ts";
import { type RecipeCopy, recipeCopy } from "../helpers/recipe-copy.ts";

/**
 * The README's recipes, followed to the letter in a throwaway copy of the checkout (test/helpers/recipe-copy.ts):
 * each makes exactly the edits its bullet names, counts the files it touched by hand (`git status` in the copy),
 * runs the generators the bullet names (their outputs are the only other files that may change) and then what
 * the bullet says proves it. A recipe that needs more files than the README says, or whose proof fails,
 * fails here. To add one (a source: 2 files, an artifact: 2 files), describe it as a {@link Recipe}.
 */

const README = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");

/** One README recipe as this test follows it. */
interface Recipe {
  /** The bold title of its README bullet (`Add a coin`). */
  title: string;
  /** Strings its README bullet must contain: the files it edits and the commands it runs, as the README writes them. */
  names: string[];
  /** How many files the recipe edits by hand. */
  handEdits: number;
  /** The hand edits, made in the copy. */
  edit(copy: RecipeCopy): void;
  /** Generators the bullet names (command and args, run in the copy) and the files each may rewrite. */
  generators: { cmd: string; args: string[]; outputs: string[] }[];
  /** What the bullet says proves the recipe, run in the copy after the generators. */
  prove(copy: RecipeCopy): void;
}

/** The text of the README bullet `- **<title>**…` up to the next bullet or heading. */
function readmeBullet(title: string): string {
  const start = README.indexOf(`- **${title}**`);
  if (start < 0) throw new Error(`README has no recipe "${title}"`);
  const rest = README.slice(start + 2);
  const end = rest.search(/\n(- |#)/);
  return end < 0 ? rest : rest.slice(0, end);
}

/** Follows `recipe` in a fresh copy: README names, hand edits counted, generators, proof. */
function follow(recipe: Recipe): void {
  const bullet = readmeBullet(recipe.title);
  for (const name of recipe.names) expect(bullet, `README recipe "${recipe.title}" names ${name}`).toContain(name);
  const copy = recipeCopy(recipe.title.toLowerCase().replace(/\W+/g, "-"));
  try {
    recipe.edit(copy);
    const edited = copy.changedFiles();
    expect(edited, "files the recipe edits by hand").toHaveLength(recipe.handEdits);
    for (const g of recipe.generators) {
      const r = copy.run(g.cmd, g.args);
      expect(r.status, `${g.cmd} ${g.args.join(" ")}:\n${r.output}`).toBe(0);
    }
    const generated = copy.changedFiles().filter((f) => !edited.includes(f));
    expect(generated, "files the generators rewrote").toEqual(
      [...new Set(recipe.generators.flatMap((g) => g.outputs))].sort(),
    );
    recipe.prove(copy);
  } finally {
    copy.remove();
  }
}

/** Expects every test named in `names` to have run and passed, and none to have failed. */
function expectPassed(t: ReturnType<RecipeCopy["vitest"]>, names: string[]): void {
  expect(t.failed, t.output).toEqual([]);
  for (const n of names)
    expect(
      t.passed.some((p) => p.endsWith(n)),
      `${n} passed\n${t.output}`,
    ).toBe(true);
}

const CURATED = "pipelines/registry/coins.curated.json";
const REGISTRY = "pipelines/registry/registry.json";
/** The coin the recipe adds: no upstream ids, so the registry takes everything from the curated record. */
const NEW_COIN = {
  id: "rcpusd-recipe-check",
  symbol: "RCPUSD",
  issuer: "Recipe Check",
  name: "Recipe Check USD",
  pegType: "peggedUSD",
  pegMechanism: "fiat-backed",
  llamaId: null,
  geckoId: null,
};

const addCoin: Recipe = {
  title: "Add a coin",
  names: ["pipelines/registry/coins.curated.json", "npx tsx build/cli.ts registry", "pipelines/registry/registry.json"],
  handEdits: 1,
  edit(copy) {
    // one record, one line, at its place in the id order (the file is sorted by id)
    copy.edit(CURATED, (text) => {
      const lines = text.split("\n");
      const at = lines.findIndex((l) => /^ {2}\{"id":"/.test(l) && l.slice(9, l.indexOf('"', 9)) > NEW_COIN.id);
      lines.splice(at, 0, `  ${JSON.stringify(NEW_COIN)},`);
      return lines.join("\n");
    });
  },
  generators: [{ cmd: "npx", args: ["tsx", "build/cli.ts", "registry"], outputs: [REGISTRY] }],
  prove(copy) {
    const coins: { id: string }[] = JSON.parse(copy.read(REGISTRY)).coins;
    expect(coins.find((c) => c.id === NEW_COIN.id)).toMatchObject({
      symbol: "RCPUSD",
      name: "Recipe Check USD",
      pegType: "peggedUSD",
      pegCurrency: "USD",
      provenance: ["curated"],
    });
    const t = copy.vitest(["test/unit/registry.test.ts"]);
    expectPassed(t, ["equals what the generator makes from the curated records and the recorded inputs (no drift)"]);
  },
};

/** Path of the route the recipe declares: the published non-USD share served byte for byte. */
const NEW_PATH = "/api/recipe-non-usd-share";

const addRoute: Recipe = {
  title: "Add a route",
  names: ["api/routes/<resource>.ts", "make openapi", "test/api/app.test.ts", "artifact: bind(myArtifact)"],
  handEdits: 1,
  edit(copy) {
    // the README's declaration for a published artifact, in an existing resource file (api/routes/chains.ts
    // already imports the artifact and `bind`), appended to its route list
    copy.edit("api/routes/chains.ts", (text) =>
      text.replace(
        /\n\];\n*$/,
        `\n  {
    kind: "json",
    operationId: "getRecipeNonUsdShare",
    method: "GET",
    path: "${NEW_PATH}",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: false,
    artifact: bind(nonUsdShareArtifact),
    summary: "Share of non-USD peg groups, as published",
  },
];\n`,
      ),
    );
  },
  // `make openapi`, without reinstalling the copy's dependencies (its node_modules is this checkout's)
  generators: [
    { cmd: "make", args: ["-o", "node_modules/.package-lock.json", "openapi"], outputs: ["api/openapi.json"] },
  ],
  prove(copy) {
    const doc = JSON.parse(copy.read("api/openapi.json"));
    expect(doc.paths[NEW_PATH]?.get?.operationId).toBe("getRecipeNonUsdShare");
    const t = copy.vitest(["test/api/app.test.ts", "test/contract/contract.test.ts"], {
      namePattern:
        "answers 200 on each route|unknown query parameters are 400 naming them|committed api/openapi.json matches|every route declares an operationId",
      recordedBuild: inject("recordedBuild"),
    });
    expectPassed(t, [
      "answers 200 on each route with a valid request, matching its declared schema",
      "unknown query parameters are 400 naming them on every served route",
      "committed api/openapi.json matches the route declarations (run `make openapi`)",
    ]);
  },
};

/** Key, file, path and route of the artifact the recipe adds (its SQL reads nothing, so any build serves it). */
const NEW_ARTIFACT = { key: "recipe-check", module: "site-data/recipe-check.ts", sql: "site-data/recipe_check.sql" };
const NEW_ARTIFACT_PATH = "/api/recipe-check";

/**
 * Run in the copy (`npx tsx`, a file under the copy's ignored `.tmp/`) after the recipe: the artifact is
 * found by file and its route is in the route table; the site-data emitter publishes its file (payload,
 * rows, data time) from its SQL; added to a copy of the recorded build (file and manifest record), the
 * in-process app answers the route with the file byte for byte. Prints one JSON line.
 */
const PROVE_ARTIFACT = `
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROUTES } from "../api/routes/index.ts";
import { Db } from "../build/duckdb.ts";
import { siteDataEmitterOf } from "../build/stages/emitters.ts";
import { SITE_DATA_ARTIFACTS } from "../site-data/artifacts.ts";
import { serveDir } from "../test/helpers/served-build.ts";
const [recorded] = process.argv.slice(2);
const artifact = SITE_DATA_ARTIFACTS.find((a) => a.key === ${JSON.stringify(NEW_ARTIFACT.key)});
if (!artifact) throw new Error("artifact not discovered");
const routed = ROUTES.some((r) => r.path === ${JSON.stringify(NEW_ARTIFACT_PATH)});
const db = await Db.open(":memory:");
const spooled = new Map();
const { files } = await siteDataEmitterOf([artifact]).emit({
  db, asOf: 1_000_000, sourceObservedAt: {},
  spool: async (body) => { const b = Buffer.from(body); spooled.set(b, b); return b; },
});
db.close();
const [file] = files;
const dir = mkdtempSync(join(tmpdir(), "ballast-recipe-artifact-"));
cpSync(recorded, dir, { recursive: true });
const latest = JSON.parse(readFileSync(join(dir, "latest.json"), "utf8"));
const manifestPath = join(dir, latest.manifest);
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const body = Buffer.from(file.body);
writeFileSync(join(dir, latest.manifest.replace(/manifest.json$/, file.path)), body);
manifest.files.push({ path: file.path, sha256: createHash("sha256").update(body).digest("hex"), bytes: body.length, ...file.extras });
writeFileSync(manifestPath, JSON.stringify(manifest));
const served = await serveDir(dir, "recipe_artifact_" + process.pid);
const res = await served.req(${JSON.stringify(NEW_ARTIFACT_PATH)});
const answer = { status: res.status, body: await res.text() };
await served.close();
console.log(JSON.stringify({ routed, path: file.path, extras: file.extras, published: body.toString(), answer }));
`;

const addArtifact: Recipe = {
  title: "Add an artifact",
  names: ["site-data/", "sqlArtifact(import.meta.url", "make openapi", "npx tsx scripts/write-build-effects.ts"],
  handEdits: 2,
  edit(copy) {
    // the README's two files: one declaration (with its route) and its SQL, wire names in the SQL
    writeFileSync(
      join(copy.dir, NEW_ARTIFACT.sql),
      "-- /api/recipe-check: one row.\nselect 7::integer as sevenValue, [1.5, 2.5]::double[] as halves, {label: 'ok'} as meta\n",
    );
    writeFileSync(
      join(copy.dir, NEW_ARTIFACT.module),
      `import { z } from "zod";
import { sqlArtifact } from "./contract.ts";

/** \`/api/recipe-check\` body: a recipe check. */
export const RecipeCheckSchema = z.object({
  sevenValue: z.number().int(),
  halves: z.array(z.number()),
  meta: z.object({ label: z.string() }),
});

/** \`site-data/recipe-check.json\` — a recipe check. */
export const recipeCheckArtifact = sqlArtifact(import.meta.url, {
  key: "${NEW_ARTIFACT.key}",
  schemaVersion: "1.0.0",
  maxAgeSec: 3600,
  description: "Recipe check.",
  path: "site-data/recipe-check.json",
  schema: RecipeCheckSchema,
  sql: "recipe_check",
  shape: "one",
  route: {
    operationId: "getRecipeCheck",
    path: "${NEW_ARTIFACT_PATH}",
    summary: "Recipe check",
    description: "Recipe check, as published.",
    cache: "standard",
    meta: false,
  },
});
`,
    );
  },
  generators: [
    { cmd: "make", args: ["-o", "node_modules/.package-lock.json", "openapi"], outputs: ["api/openapi.json"] },
  ],
  prove(copy) {
    const doc = JSON.parse(copy.read("api/openapi.json"));
    expect(doc.paths[NEW_ARTIFACT_PATH]?.get?.operationId).toBe("getRecipeCheck");
    mkdirSync(join(copy.dir, ".tmp"), { recursive: true });
    writeFileSync(join(copy.dir, ".tmp/prove-artifact.ts"), PROVE_ARTIFACT);
    const recorded = inject("recordedBuild") as { dir: string };
    const r = copy.run("npx", ["tsx", ".tmp/prove-artifact.ts", recorded.dir]);
    expect(r.status, r.output).toBe(0);
    const proof = JSON.parse(r.output.trim().split("\n").at(-1) ?? "null");
    const expected = '{"sevenValue":7,"halves":[1.5,2.5],"meta":{"label":"ok"}}\n';
    expect(proof).toEqual({
      routed: true,
      path: "site-data/recipe-check.json",
      extras: { artifact: NEW_ARTIFACT.key, rows: 1, dataAsOf: 1_000_000, schemaVersion: "1.0.0", maxAgeSec: 3600 },
      published: expected,
      answer: { status: 200, body: expected },
    });
  },
};

/**
 * Run in the copy after the source recipe: every view of the declarations (endpoints, base URLs, live
 * plan, recorded captures, circuit groups) holds the new source, and the model DAG finds its staging SQL.
 */
const PROVE_SOURCE = `
import { join } from "node:path";
import { discoverModels } from "../build/models.ts";
import { REPO_ROOT } from "../build/config.ts";
import { ENDPOINTS, liveCapturePlan, SOURCE_BASE_URLS } from "../pipelines/sources/endpoints.ts";
import { RECORDED_CAPTURES } from "../pipelines/sources/recorded-captures.ts";
import { SOURCE_CIRCUIT_GROUPS, SOURCES } from "../pipelines/sources/sources.ts";
const stg = discoverModels(join(REPO_ROOT, "pipelines/models")).find((m) => m.name === "stg_demo__prices");
console.log(JSON.stringify({
  sources: SOURCES.some((s) => s.name === "demo"),
  table: ENDPOINTS["demo.prices"]?.table.name ?? null,
  baseUrl: SOURCE_BASE_URLS.demo ?? null,
  live: liveCapturePlan({ detailLlamaIds: [], chartGeckoIds: [], fxStart: "2025-01-01" }).some((s) => s.endpoint === "demo.prices"),
  recorded: RECORDED_CAPTURES.some((r) => r.file === "demo/prices.json"),
  circuitGroup: SOURCE_CIRCUIT_GROUPS.demo ?? null,
  staging: stg ? { layer: stg.layer, outputs: stg.outputs } : null,
}));
`;

const addSource: Recipe = {
  title: "Add a source",
  names: ["pipelines/sources/<source>/", "source.ts", "SourceDeclaration", "stg_<source>__<entity>.sql", "badRows"],
  handEdits: 2,
  edit(copy) {
    mkdirSync(join(copy.dir, "pipelines/sources/demo"));
    writeFileSync(join(copy.dir, "pipelines/sources/demo/source.ts"), DEMO_SOURCE);
    writeFileSync(join(copy.dir, "pipelines/sources/demo/stg_demo__prices.sql"), DEMO_STAGING);
  },
  generators: [],
  prove(copy) {
    mkdirSync(join(copy.dir, ".tmp"), { recursive: true });
    writeFileSync(join(copy.dir, ".tmp/prove-source.ts"), PROVE_SOURCE);
    const r = copy.run("npx", ["tsx", ".tmp/prove-source.ts"]);
    expect(r.status, r.output).toBe(0);
    expect(JSON.parse(r.output.trim().split("\n").at(-1) ?? "null")).toEqual({
      sources: true,
      table: "raw_demo__prices",
      baseUrl: "https://demo.invalid/",
      live: true,
      recorded: true,
      circuitGroup: "demo",
      staging: { layer: "staging", outputs: ["stg_demo__prices"] },
    });
    // the sources tests pick it up: discovery, circuit groups, and its bad-row fixture run
    const t = copy.vitest(["test/unit/sources.test.ts"], {
      namePattern:
        "every source folder's declaration is discovered|circuit groups are the sources|demo.prices: a malformed element",
    });
    expectPassed(t, [
      "every source folder's declaration is discovered, and every endpoint of the build belongs to one",
      "circuit groups are the sources' lineage families, and health groups every circuit that way",
      "demo.prices: a malformed element drops only itself",
    ]);
  },
};

describe("README recipes, followed in a copy of the checkout", () => {
  it.each([addCoin, addRoute, addArtifact, addSource])(
    "$title: the files the README names, then its proof passes",
    (recipe) => {
      follow(recipe);
    },
  );
});
