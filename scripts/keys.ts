/**
 * API key management for operators (spec 5.3 partner keys, 5.4 storage). Uses the server's state
 * store config: DATABASE_URL + API_KEY_PEPPER, else the embedded PGlite and pepper file under
 * BALLAST_DATA_DIR/state (stop a server using the same embedded store first: PGlite is single-process).
 *
 *   npx tsx scripts/keys.ts create --name N [--tier standard|donor] [--limit 120] [--owner email]
 *   npx tsx scripts/keys.ts list
 *   npx tsx scripts/keys.ts deactivate <id>
 *   npx tsx scripts/keys.ts rotate <id>
 *
 * `create` and `rotate` print the plaintext token once; nothing else ever shows a secret. Running
 * API instances may accept a deactivated or rotated-away token from their verification cache for
 * up to 5 s. Exit 1 on invalid input, unknown id or unavailable state store.
 */
import { parseArgs } from "node:util";
import { loadApiConfig } from "../api/config.ts";
import { type ApiKeyRecord, type KeyStore, KeyInputError, openKeyStore, RATE_LIMIT_MAX, RATE_LIMIT_MIN, StateStoreUnavailableError, validateKeyInput } from "../api/lib/key-store.ts";

const USAGE = `Usage:
  npx tsx scripts/keys.ts create --name <name> [--tier standard|donor] [--limit <${RATE_LIMIT_MIN}-${RATE_LIMIT_MAX} per minute, default 120>] [--owner <email>]
  npx tsx scripts/keys.ts list
  npx tsx scripts/keys.ts deactivate <id>
  npx tsx scripts/keys.ts rotate <id>`;

class UsageError extends Error {}

const fmtExpiry = (sec: number | null) => (sec === null ? "never" : new Date(sec * 1000).toISOString().slice(0, 19) + "Z");

function printRecord(r: ApiKeyRecord): void {
  process.stdout.write(`id ${r.id}  name ${JSON.stringify(r.name)}  tier ${r.tier}  limit ${r.rateLimitPerMinute}/min  expires ${fmtExpiry(r.expiresAt)}\n`);
}

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()}\n`);
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv, allowPositionals: true, strict: true,
    options: { name: { type: "string" }, tier: { type: "string" }, limit: { type: "string" }, owner: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  const [command, id, ...extra] = positionals;
  if (values.help) { process.stdout.write(`${USAGE}\n`); return; }
  if (!command) throw new UsageError("missing command");
  if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);
  const needsId = command === "deactivate" || command === "rotate";
  if (!["create", "list", "deactivate", "rotate"].includes(command)) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  if (needsId && !id) throw new UsageError(`${command} needs a key id (see: list)`);
  if (!needsId && id) throw new UsageError(`unexpected argument ${JSON.stringify(id)}`);
  if (command !== "create" && (values.name ?? values.tier ?? values.limit ?? values.owner) !== undefined) throw new UsageError(`--name, --tier, --limit and --owner only apply to create`);
  if (command === "create" && values.name === undefined) throw new UsageError("create needs --name");
  // Validate before touching the store, so bad input fails the same way with the store down.
  const input = command === "create" ? validateKeyInput({ name: values.name!, tier: values.tier, rateLimitPerMinute: values.limit, ownerEmail: values.owner }) : undefined;

  const config = loadApiConfig();
  const keys: KeyStore = await openKeyStore({
    databaseUrl: config.DATABASE_URL, pepper: config.API_KEY_PEPPER, dataDir: config.BALLAST_DATA_DIR,
    applicationName: process.env.PGAPPNAME ?? "ballast-keys", timeoutMs: Math.max(config.STATE_STORE_TIMEOUT_MS, 5000), adminDeadlineMs: 15_000,
  });
  try {
    if (command === "create") {
      const { record, token } = await keys.create(input!);
      process.stdout.write(`Created API key (the token is shown only now; store it securely):\n${token}\n`);
      printRecord(record);
    } else if (command === "list") {
      const rows = await keys.list();
      printTable([
        ["id", "prefix", "name", "tier", "limit", "active", "expires"],
        ...rows.map((r) => [r.id, r.maskedToken, r.name, r.tier, String(r.rateLimitPerMinute), r.isActive ? "yes" : "no", fmtExpiry(r.expiresAt)]),
      ]);
      process.stdout.write(`${rows.length} key(s)\n`);
    } else if (command === "deactivate") {
      if (!(await keys.deactivate(id))) throw new UsageError(`no key with id ${JSON.stringify(id)}`);
      process.stdout.write(`Deactivated ${id}\n`);
    } else {
      const rotated = await keys.rotate(id);
      if (!rotated) throw new UsageError(`no active key with id ${JSON.stringify(id)}`);
      process.stdout.write(`Rotated API key; the old token no longer works. New token (shown only now):\n${rotated.token}\n`);
      printRecord(rotated.record);
    }
  } finally {
    await keys.close();
  }
}

try {
  await run(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError || err instanceof KeyInputError || err instanceof StateStoreUnavailableError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) process.stderr.write(`${USAGE}\n`);
    process.exitCode = 1;
  } else {
    throw err;
  }
}
