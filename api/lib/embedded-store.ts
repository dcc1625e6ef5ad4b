/**
 * Ownership of the embedded state store (PGlite under `<dataDir>/state/pglite`), which only one
 * process may open: the server, or the key CLI while no server runs. The owner holds
 * `<dataDir>/state/owner.json` (created exclusively, mode 0600): `{ pid, role, socket, startedAt }`.
 * A file left by a dead process is taken over. A server records there the unix socket of its
 * local key-admin endpoint (api/lib/key-admin.ts), through which the CLI makes its changes.
 */
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Who holds the embedded store. `socket`: the server's key-admin unix socket, null until it listens (or for the CLI). */
export interface EmbeddedOwner {
  pid: number;
  role: "server" | "cli";
  socket: string | null;
  /** Unix ms. */
  startedAt: number;
}

/** The embedded store is held by another live process (`owner`). */
export class EmbeddedStoreBusyError extends Error {
  override readonly name = "EmbeddedStoreBusyError";
  constructor(
    readonly owner: EmbeddedOwner,
    readonly stateDir: string,
  ) {
    super(
      `the ${owner.role === "server" ? "API server" : "key CLI"} (pid ${owner.pid}) owns the embedded state store in ${stateDir}`,
    );
  }
}

/** A held ownership: `setSocket` records the admin socket; `release` removes the file (only if still ours). */
export interface EmbeddedLock {
  readonly path: string;
  setSocket(socket: string | null): void;
  release(): void;
}

const ownerPath = (stateDir: string) => join(stateDir, "owner.json");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(path: string): EmbeddedOwner | null {
  try {
    const o = JSON.parse(readFileSync(path, "utf8")) as EmbeddedOwner;
    return Number.isInteger(o.pid) && (o.role === "server" || o.role === "cli") ? o : null;
  } catch {
    return null;
  }
}

/**
 * The live owner of the embedded store in `stateDir`, or null when none (no file, unreadable, or its
 * process is gone).
 */
export function embeddedOwner(stateDir: string): EmbeddedOwner | null {
  const o = readOwner(ownerPath(stateDir));
  return o && alive(o.pid) ? o : null;
}

/**
 * Takes ownership of the embedded store in `stateDir` (created, and set to mode 0700) for this
 * process as `role`.
 * @throws EmbeddedStoreBusyError when another live process holds it.
 */
export function acquireEmbeddedLock(stateDir: string, role: EmbeddedOwner["role"]): EmbeddedLock {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // Pepper, development key, PGlite files and the admin socket live here: owner-only.
  chmodSync(stateDir, 0o700);
  const path = ownerPath(stateDir);
  let me: EmbeddedOwner = { pid: process.pid, role, socket: null, startedAt: Date.now() };
  const write = (flag: "wx" | "w") => {
    const fd = openSync(path, flag, 0o600);
    try {
      writeSync(fd, JSON.stringify(me));
    } finally {
      closeSync(fd);
    }
  };
  for (let attempt = 0; ; attempt++) {
    try {
      write("wx");
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 2) throw err;
      const o = readOwner(path);
      if (o && o.pid !== process.pid && alive(o.pid)) throw new EmbeddedStoreBusyError(o, stateDir);
      // Left by a dead process (or unreadable): take it over.
      rmSync(path, { force: true });
    }
  }
  let held = true;
  const mine = () => readOwner(path)?.pid === process.pid && readOwner(path)?.startedAt === me.startedAt;
  return {
    path,
    setSocket(socket) {
      if (!held || !mine()) return;
      me = { ...me, socket };
      write("w");
    },
    release() {
      if (!held) return;
      held = false;
      if (mine()) rmSync(path, { force: true });
    },
  };
}
