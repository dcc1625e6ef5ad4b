/**
 * API key management for operators (spec 4.5 rows, 5.3 partner keys, 5.4 storage). Uses the
 * server's state store config, and never writes somewhere the server does not read:
 * - DATABASE_URL + API_KEY_PEPPER (Postgres): writes directly; running instances hear every change
 *   (LISTEN/NOTIFY leases) before the command returns.
 * - Embedded PGlite under BALLAST_DATA_DIR/state (one process may open it): when an API server owns
 *   it (state/owner.json), every command goes through the server's local admin socket (a unix
 *   socket in state/, mode 0600), so changes apply to the running server at once; when the socket
 *   does not answer it refuses with a message naming the server's pid. With no server running it
 *   takes the store itself (a server started meanwhile refuses to start).
 *
 *   npx tsx scripts/keys.ts create --name N [--tier standard|donor] [--limit 120] [--owner email]
 *   npx tsx scripts/keys.ts list
 *   npx tsx scripts/keys.ts update <id> [--name N] [--tier standard|donor] [--limit N] [--owner email] [--active yes|no]
 *   npx tsx scripts/keys.ts deactivate <id>
 *   npx tsx scripts/keys.ts rotate <id>
 *
 * `create` and `rotate` print the plaintext token once; nothing else ever shows a secret. When a
 * command returns, the change is in force on every running instance. Exit 1 on invalid input,
 * unknown id, unavailable state store or a store owned by a process it cannot reach.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { loadApiConfig } from "../api/config.ts";
import { acquireEmbeddedLock, embeddedOwner, EmbeddedStoreBusyError } from "../api/lib/embedded-store.ts";
import { type KeyAdmin, keyAdminClient, KeyAdminUnreachableError } from "../api/lib/key-admin.ts";
import {
  type ApiKeyRecord,
  type KeyPatch,
  KeyInputError,
  openKeyStore,
  RATE_LIMIT_MAX,
  RATE_LIMIT_MIN,
  StateStoreUnavailableError,
  validateKeyInput,
} from "../api/lib/key-store.ts";
import { must } from "../lib/must.ts";

const USAGE = `Usage:
  npx tsx scripts/keys.ts create --name <name> [--tier standard|donor] [--limit <${RATE_LIMIT_MIN}-${RATE_LIMIT_MAX} per minute, default 120>] [--owner <email>]
  npx tsx scripts/keys.ts list
  npx tsx scripts/keys.ts update <id> [--name <name>] [--tier standard|donor] [--limit <n>] [--owner <email>] [--active yes|no]
  npx tsx scripts/keys.ts deactivate <id>
  npx tsx scripts/keys.ts rotate <id>`;

/** Bad invocation or a refusal; `showUsage` adds the usage text. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}

const fmtExpiry = (sec: number | null) =>
  sec === null ? "never" : `${new Date(sec * 1000).toISOString().slice(0, 19)}Z`;

function printRecord(r: ApiKeyRecord): void {
  process.stdout.write(
    `id ${r.id}  name ${JSON.stringify(r.name)}  tier ${r.tier}  limit ${r.rateLimitPerMinute}/min  expires ${fmtExpiry(r.expiresAt)}\n`,
  );
}

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows)
    process.stdout.write(
      `${r
        .map((c, i) => c.padEnd(widths[i]))
        .join("  ")
        .trimEnd()}\n`,
    );
}

/** Where the CLI's changes go: the store itself, or the server that owns the embedded store. */
async function openAdmin(): Promise<{ admin: KeyAdmin; note: string | null; close(): Promise<void> }> {
  const config = loadApiConfig();
  const direct = async () =>
    openKeyStore({
      databaseUrl: config.DATABASE_URL,
      pepper: config.API_KEY_PEPPER,
      previousPepper: config.API_KEY_PEPPER_PREVIOUS,
      dataDir: config.BALLAST_DATA_DIR,
      applicationName: process.env.PGAPPNAME ?? "ballast-keys",
      timeoutMs: Math.max(config.STATE_STORE_TIMEOUT_MS, 5000),
      adminDeadlineMs: 15_000,
    });
  if (config.DATABASE_URL) {
    const keys = await direct();
    return { admin: keys, note: null, close: () => keys.close() };
  }
  const stateDir = join(config.BALLAST_DATA_DIR, "state");
  const owner = embeddedOwner(stateDir);
  if (owner?.role === "server") {
    if (!owner.socket)
      throw new UsageError(
        `the API server (pid ${owner.pid}) owns the embedded state store in ${stateDir} and is still starting; retry in a moment, or stop it, or use DATABASE_URL`,
        false,
      );
    return {
      admin: keyAdminClient(owner.socket),
      note: `(through the running API server, pid ${owner.pid})`,
      close: async () => undefined,
    };
  }
  if (owner)
    throw new UsageError(
      `another keys.ts process (pid ${owner.pid}) has the embedded state store in ${stateDir} open; retry when it has finished`,
      false,
    );
  const lock = acquireEmbeddedLock(stateDir, "cli");
  try {
    const keys = await direct();
    return {
      admin: keys,
      note: null,
      close: async () => {
        await keys.close();
        lock.release();
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

function parseActive(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (/^(yes|true|1)$/i.test(v)) return true;
  if (/^(no|false|0)$/i.test(v)) return false;
  throw new UsageError(`--active expects yes or no (got ${JSON.stringify(v)})`);
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: "string" },
      tier: { type: "string" },
      limit: { type: "string" },
      owner: { type: "string" },
      active: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, id, ...extra] = positionals;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!command) throw new UsageError("missing command");
  if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);
  const needsId = command === "deactivate" || command === "rotate" || command === "update";
  if (!["create", "list", "update", "deactivate", "rotate"].includes(command))
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  if (needsId && !id) throw new UsageError(`${command} needs a key id (see: list)`);
  if (!needsId && id) throw new UsageError(`unexpected argument ${JSON.stringify(id)}`);
  const flags = [values.name, values.tier, values.limit, values.owner];
  if (command !== "create" && command !== "update" && [...flags, values.active].some((f) => f !== undefined))
    throw new UsageError(`--name, --tier, --limit, --owner and --active only apply to create and update`);
  if (command === "create" && values.active !== undefined) throw new UsageError("--active only applies to update");
  const name = values.name;
  if (command === "create" && name === undefined) throw new UsageError("create needs --name");
  // Validate before touching the store, so bad input fails the same way with the store down.
  const input =
    command === "create" && name !== undefined
      ? validateKeyInput({
          name,
          tier: values.tier,
          rateLimitPerMinute: values.limit,
          ownerEmail: values.owner,
        })
      : undefined;
  let patch: KeyPatch | undefined;
  if (command === "update") {
    patch = {
      name: values.name,
      tier: values.tier,
      rateLimitPerMinute: values.limit,
      ownerEmail: values.owner,
      isActive: parseActive(values.active),
    };
    if (Object.values(patch).every((v) => v === undefined))
      throw new UsageError("update needs at least one of --name, --tier, --limit, --owner, --active");
  }

  const { admin, note, close } = await openAdmin();
  try {
    if (command === "create") {
      const { record, token } = await admin.create(must(input, "validated create input"));
      process.stdout.write(`Created API key (the token is shown only now; store it securely):\n${token}\n`);
      printRecord(record);
    } else if (command === "list") {
      const rows = await admin.list();
      printTable([
        ["id", "prefix", "name", "tier", "limit", "active", "expires"],
        ...rows.map((r) => [
          r.id,
          r.maskedToken,
          r.name,
          r.tier,
          String(r.rateLimitPerMinute),
          r.isActive ? "yes" : "no",
          fmtExpiry(r.expiresAt),
        ]),
      ]);
      process.stdout.write(`${rows.length} key(s)\n`);
    } else if (command === "update") {
      const updated = await admin.update(id, must(patch, "validated update patch"));
      if (!updated) throw new UsageError(`no key with id ${JSON.stringify(id)}`, false);
      process.stdout.write(`Updated API key; in force on every running instance:\n`);
      printRecord(updated);
    } else if (command === "deactivate") {
      if (!(await admin.deactivate(id))) throw new UsageError(`no key with id ${JSON.stringify(id)}`, false);
      process.stdout.write(`Deactivated ${id}; it answers 401 on every running instance\n`);
    } else {
      const rotated = await admin.rotate(id);
      if (!rotated) throw new UsageError(`no active key with id ${JSON.stringify(id)}`, false);
      process.stdout.write(
        `Rotated API key; the old token no longer works. New token (shown only now):\n${rotated.token}\n`,
      );
      printRecord(rotated.record);
    }
    if (note) process.stdout.write(`${note}\n`);
  } finally {
    await close();
  }
}

try {
  await run(process.argv.slice(2));
} catch (err) {
  if (err instanceof KeyAdminUnreachableError) {
    const owner = embeddedOwner(join(loadApiConfig().BALLAST_DATA_DIR, "state"));
    process.stderr.write(
      `Error: the API server${owner ? ` (pid ${owner.pid})` : ""} owns the embedded state store, but ${err.message}; stop it, or use DATABASE_URL\n`,
    );
    process.exitCode = 1;
  } else if (
    err instanceof UsageError ||
    err instanceof KeyInputError ||
    err instanceof StateStoreUnavailableError ||
    err instanceof EmbeddedStoreBusyError ||
    (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
  ) {
    process.stderr.write(
      `Error: ${(err as Error).message}${err instanceof EmbeddedStoreBusyError ? "; retry when it has finished, or use DATABASE_URL" : ""}\n`,
    );
    if ((err instanceof UsageError && err.showUsage) || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"))
      process.stderr.write(`${USAGE}\n`);
    process.exitCode = 1;
  } else {
    throw err;
  }
}
