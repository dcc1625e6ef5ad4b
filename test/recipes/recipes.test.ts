import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
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

describe("README recipes, followed in a copy of the checkout", () => {
  it.each([addCoin, addRoute])("$title: the files the README names, then its proof passes", (recipe) => {
    follow(recipe);
  });
});
