import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** Root of this checkout (the copy's source). */
const ROOT = resolve(import.meta.dirname, "../..");

/** What a command run in the copy left: exit status and its output. */
export interface RecipeRun {
  /** Exit status (null when killed by a signal). */
  status: number | null;
  /** stdout and stderr, interleaved by stream, for failure messages. */
  output: string;
}

/** Outcome of test files run by vitest inside the copy ({@link RecipeCopy.vitest}). */
export interface RecipeTests extends RecipeRun {
  /** Full names (`describe > it`) of the tests that passed. */
  passed: string[];
  /** Full names of the tests that failed. */
  failed: string[];
}

/**
 * A throwaway copy of this checkout in which a README recipe is followed exactly: every tracked file
 * (`git ls-files`, as it is in the working tree) under `<tmp>/checkout`, `node_modules` symlinked to this
 * checkout's, `<tmp>/shared` symlinked to `../shared` (so the copy's `../shared` resolves as here), and a
 * git repository of its own whose one commit is the copy, so {@link changedFiles} names what the recipe
 * touched. Nothing of this checkout or of `../shared` is ever written.
 */
export interface RecipeCopy {
  /** Absolute path of the copy's root. */
  dir: string;
  /** Text of `path` (relative to the copy's root). */
  read(path: string): string;
  /**
   * Replaces the text of `path` with `change(text)`; throws when the change leaves the file as it was
   * (a recipe step that edits nothing is a broken test, not a passing one).
   */
  edit(path: string, change: (text: string) => string): void;
  /** Paths (relative, sorted) that differ from the copy's commit, untracked files included (`git status --porcelain`). */
  changedFiles(): string[];
  /** Runs `cmd args` in the copy's root (env: this process's plus `env`). */
  run(cmd: string, args: string[], env?: Record<string, string>): RecipeRun;
  /**
   * Runs the copy's test `files` with the copy's vitest, restricted to the tests whose full name matches
   * `namePattern` (vitest `-t`, a regex) when given. The copy's own global setup (the recorded build) is
   * replaced by one that provides `recordedBuild` (when given: a data dir with the recorded build, copied
   * by each test as usual), so no test file builds again.
   */
  vitest(
    files: string[],
    opts?: { namePattern?: string; recordedBuild?: { dir: string; manifest: unknown } },
  ): RecipeTests;
  /** Deletes the copy. */
  remove(): void;
}

/** A fresh {@link RecipeCopy} of this checkout; `name` names its temp dir (`ballast-recipe-<name>-…`). */
export function recipeCopy(name: string): RecipeCopy {
  const tmp = mkdtempSync(join(tmpdir(), `ballast-recipe-${name}-`));
  const dir = join(tmp, "checkout");
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 << 20 })
    .split("\0")
    .filter((p) => p !== "" && existsSync(join(ROOT, p))); // a tracked file deleted in the working tree stays deleted
  for (const p of tracked) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    copyFileSync(join(ROOT, p), join(dir, p));
  }
  symlinkSync(realpathSync(join(ROOT, "node_modules")), join(dir, "node_modules"));
  const shared = resolve(ROOT, "../shared");
  if (existsSync(shared)) symlinkSync(realpathSync(shared), join(tmp, "shared"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=recipe", "-c", "user.email=recipe@localhost", ...args], {
      cwd: dir,
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
  git("init", "-q");
  writeFileSync(join(dir, ".git", "info", "exclude"), "/node_modules\n");
  git("add", "-A");
  git("commit", "-q", "--no-gpg-sign", "-m", "checkout as copied");

  const run = (cmd: string, args: string[], env: Record<string, string> = {}): RecipeRun => {
    const r = spawnSync(cmd, args, {
      cwd: dir,
      env: { ...process.env, ...env },
      encoding: "utf8",
      maxBuffer: 256 << 20,
    });
    return { status: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
  };

  return {
    dir,
    read: (path) => readFileSync(join(dir, path), "utf8"),
    edit(path, change) {
      const before = readFileSync(join(dir, path), "utf8");
      const after = change(before);
      if (after === before) throw new Error(`recipe step left ${path} unchanged`);
      writeFileSync(join(dir, path), after);
    },
    changedFiles: () =>
      git("status", "--porcelain", "--untracked-files=all")
        .split("\n")
        .filter((l) => l.length > 3)
        .map((l) => l.slice(3))
        .sort(),
    run,
    vitest(files, opts = {}) {
      const setup = join(tmp, "recipe-global-setup.mjs");
      const provided = join(tmp, "recorded-build.json");
      writeFileSync(provided, JSON.stringify(opts.recordedBuild ?? null));
      // Plain modules outside the copy (no import to resolve, nothing for git status to see).
      writeFileSync(
        setup,
        [
          'import { readFileSync } from "node:fs";',
          `const build = JSON.parse(readFileSync(${JSON.stringify(provided)}, "utf8"));`,
          'export default function setup(project) { if (build) project.provide("recordedBuild", build); }',
          "",
        ].join("\n"),
      );
      const config = join(tmp, "vitest.recipe.config.mjs");
      writeFileSync(
        config,
        `export default ${JSON.stringify({
          test: {
            include: ["test/**/*.test.ts"],
            globalSetup: [setup],
            pool: "forks",
            testTimeout: 600_000,
            hookTimeout: 900_000,
            maxWorkers: 2,
          },
        })};\n`,
      );
      const report = join(tmp, `vitest-${Date.now()}.json`);
      const r = run(join(dir, "node_modules", ".bin", "vitest"), [
        "run",
        "--config",
        config,
        "--root",
        dir,
        "--reporter=json",
        `--outputFile=${report}`,
        ...(opts.namePattern ? ["-t", opts.namePattern] : []),
        ...files,
      ]);
      const results: { assertionResults: { fullName: string; status: string }[] }[] = existsSync(report)
        ? JSON.parse(readFileSync(report, "utf8")).testResults
        : [];
      const all = results.flatMap((f) => f.assertionResults);
      return {
        ...r,
        passed: all.filter((t) => t.status === "passed").map((t) => t.fullName),
        failed: all.filter((t) => t.status === "failed").map((t) => t.fullName),
      };
    },
    remove: () => rmSync(tmp, { recursive: true, force: true }),
  };
}
