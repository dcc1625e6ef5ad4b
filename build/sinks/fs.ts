import type { Dirent } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { processRuns } from "../../lib/processes.ts";
import { assertFolderPrefix, type PublishSink } from "./sink.ts";

/** Temporary file of an unfinished put: `<key>.<pid>.<rand>.tmp` (pid of the writing process). */
const TEMP_FILE = /\.(\d+)\.[a-z0-9]*\.tmp$/;

/** Local filesystem sink: writes to a temp file then renames, so readers never see half a file. */
export class FsSink implements PublishSink {
  constructor(readonly root: string) {}

  async put(key: string, body: Uint8Array | string): Promise<void> {
    const path = join(this.root, key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(tmp, body);
    await rename(tmp, path);
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      return await readFile(join(this.root, key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    return (await this.files(prefix)).filter((k) => !k.endsWith(".tmp"));
  }

  async listDirs(prefix: string): Promise<string[]> {
    try {
      return (await readdir(join(this.root, prefix), { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
  }

  async listAbandoned(skipFolders: readonly string[] = []): Promise<string[]> {
    return (await this.files("", skipFolders)).filter((k) => {
      const m = TEMP_FILE.exec(k);
      return k.endsWith(".tmp") && !(m && processRuns(Number(m[1])));
    });
  }

  async delete(key: string): Promise<void> {
    await rm(join(this.root, key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    assertFolderPrefix(prefix);
    await rm(join(this.root, prefix), { recursive: true, force: true });
  }

  describe(key: string): string {
    return resolve(this.root, key);
  }

  /**
   * Every file under a prefix (temporary ones included) as sorted keys, not descending into
   * `skipFolders` (keys ending with `/`); [] when the folder is missing.
   */
  private async files(prefix: string, skipFolders: readonly string[] = []): Promise<string[]> {
    const keys: string[] = [];
    const walk = async (folder: string): Promise<void> => {
      let entries: Dirent[];
      try {
        entries = await readdir(join(this.root, folder), { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
        throw err;
      }
      for (const e of entries) {
        const key = relative(this.root, join(this.root, folder, e.name))
          .split(sep)
          .join("/");
        if (e.isFile()) keys.push(key);
        else if (e.isDirectory() && !skipFolders.includes(`${key}/`)) await walk(key);
      }
    };
    await walk(prefix);
    return keys.sort();
  }
}
