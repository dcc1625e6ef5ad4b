import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

// A client generated from the committed description (the contract test keeps it equal to the route declarations)
// is compiled against typed uses: a wrong parameter type or a missing named schema is a compile error here.
const ROOT = join(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "ballast-openapi-ts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Compiles `source` next to the generated `api.d.ts`; returns the diagnostics as `line: message`. */
function compile(source: string): string[] {
  const file = join(dir, "use.ts");
  writeFileSync(file, source);
  const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, types: [] });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file?.fileName === file ? line : d.file?.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}

describe("a TypeScript client generated with openapi-typescript", () => {
  it("types integer parameters as number, enums as string-literal unions, booleans, and names response schemas", async () => {
    const doc = JSON.parse(readFileSync(join(ROOT, "api/openapi.json"), "utf8"));
    writeFileSync(join(dir, "api.d.ts"), astToString(await openapiTS(doc)));
    // `@ts-expect-error` lines fail the compile when the assignment is accepted (e.g. `limit` typed string)
    const diagnostics = compile(`
import type { components, operations, paths } from "./api.js";
type Depeg = NonNullable<operations["listDepegEvents"]["parameters"]["query"]>;
type Events = NonNullable<operations["listEvents"]["parameters"]["query"]>;
const limit: NonNullable<Depeg["limit"]> = 100;
// @ts-expect-error limit is a number, not a string
const limitText: NonNullable<Depeg["limit"]> = "100";
const severity: NonNullable<Events["severityFloor"]> = "critical";
// @ts-expect-error severityFloor is the union of its declared values
const unknownSeverity: NonNullable<Events["severityFloor"]> = "fatal";
const total: NonNullable<Depeg["includeTotal"]> = false;
// @ts-expect-error includeTotal is a boolean
const totalText: NonNullable<Depeg["includeTotal"]> = "false";
type Body = paths["/api/depeg-events"]["get"]["responses"][200]["content"]["application/json"];
const named: components["schemas"]["ListDepegEventsResponse"] = {} as Body;
const body: Body = {} as components["schemas"]["ListDepegEventsResponse"];
export { body, limit, limitText, named, severity, total, totalText, unknownSeverity };
`);
    expect(diagnostics).toEqual([]);
  });

  it("the compile check above can fail: a string assigned to the generated limit type is an error", () => {
    const diagnostics = compile(`
import type { operations } from "./api.js";
type Depeg = NonNullable<operations["listDepegEvents"]["parameters"]["query"]>;
export const limit: NonNullable<Depeg["limit"]> = "100";
`);
    expect(diagnostics.join("\n")).toMatch(/^4: Type 'string' is not assignable to type 'number'/);
  });
});
