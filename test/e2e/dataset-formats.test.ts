import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../build/captures.ts";
import { Db } from "../../build/duckdb.ts";
import { DATASET_FORMATS, type DatasetFormat, fieldDocsOf, MEDIA_TYPES } from "../../datasets/contract.ts";
import { tableTypeOf, type TableFieldType } from "../../datasets/datapackage.ts";
import { DATASETS } from "../../datasets/datasets.ts";
import type { BuildManifest } from "../../site-data/manifest.ts";
import { must } from "../helpers/must.ts";
import { serveRecordedBuild } from "../helpers/served-build.ts";

// Every dataset topic × format through the API of the recorded build (2025-09-07), read back with DuckDB
// against the topic's datapackage.json.

type Served = Awaited<ReturnType<typeof serveRecordedBuild>>;
let served: Served;
let manifest: BuildManifest;
let scratch: string;
let db: Db;

beforeAll(async () => {
  served = await serveRecordedBuild("ballast-formats-", "ballast_formats");
  manifest = served.manifest;
  scratch = mkdtempSync(join(tmpdir(), "ballast-formats-read-"));
  db = await Db.open(":memory:");
});
afterAll(async () => {
  db?.close();
  await served?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  if (served?.dir) rmSync(served.dir, { recursive: true, force: true }); // the build (~110 MB) is this file's own temp dir
});

const CONTENT_TYPES: Record<DatasetFormat, string> = {
  csv: "text/csv; charset=utf-8",
  json: "application/json; charset=utf-8",
  ndjson: "application/x-ndjson",
  parquet: "application/vnd.apache.parquet",
};
const DUCKDB_TYPES: Record<TableFieldType, string> = {
  string: "VARCHAR",
  integer: "BIGINT",
  number: "DOUBLE",
  boolean: "BOOLEAN",
  date: "DATE",
  datetime: "TIMESTAMP",
  any: "VARCHAR",
};
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

interface Resource {
  name: string;
  path: string;
  format: DatasetFormat;
  mediatype: string;
  bytes: number;
  hash: string;
  rows: number;
  schema: {
    fields: { name: string; type: TableFieldType; description: string; unit?: string }[];
    primaryKey: string[];
  };
}

/** A DuckDB relation reading a resource file with the descriptor's column types (CSV: provenance line skipped). */
function relation(file: string, r: Resource): string {
  const columns = `{${r.schema.fields.map((f) => `${lit(f.name)}: ${lit(DUCKDB_TYPES[f.type])}`).join(", ")}}`;
  if (r.format === "csv")
    return `read_csv(${lit(file)}, skip = 1, header = true, columns = ${columns}, nullstr = '', quote = '"', escape = '"', auto_detect = false)`;
  if (r.format === "json") return `read_json(${lit(file)}, format = 'array', columns = ${columns})`;
  if (r.format === "ndjson") return `read_json(${lit(file)}, format = 'newline_delimited', columns = ${columns})`;
  return `read_parquet(${lit(file)})`;
}

describe("dataset formats: every topic × csv, json, ndjson, parquet and datapackage.json", () => {
  it("publishes all seven topics", () => {
    expect(DATASETS.map((d) => d.topic).sort()).toEqual([
      "contracts",
      "depeg-history",
      "freeze-events",
      "scores-latest",
      "source-quality",
      "stablecoin-cemetery",
      "top-stablecoins",
    ]);
  });

  for (const ds of DATASETS) {
    it(`${ds.topic}: every format answers 200 with its content type and reads back as the datapackage says`, async () => {
      const pkgRes = await served.req(`/datasets/${ds.topic}/datapackage.json`, null);
      expect(pkgRes.status).toBe(200);
      expect(pkgRes.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(pkgRes.headers.get("access-control-allow-origin")).toBe("*");
      const pkg = (await pkgRes.json()) as {
        profile: string;
        name: string;
        ballast: { asOf: number; buildId: string; methodology: { versionId: string }[] };
        sources: { title: string }[];
        licenses: { path: string; title: string }[];
        resources: Resource[];
      };
      expect(pkg).toMatchObject({
        profile: "tabular-data-package",
        name: ds.topic,
        ballast: { asOf: manifest.asOf, buildId: manifest.buildId },
      });
      expect(pkg.sources.length).toBe(ds.sources.length);
      expect(pkg.licenses.length).toBe(ds.sources.length);
      expect(pkg.resources.map((r) => r.format)).toEqual([...DATASET_FORMATS]);
      const rows = must(
        manifest.files.find((f) => f.artifact === `dataset:${ds.topic}`),
        `the dataset:${ds.topic} file in the manifest`,
      ).rows;
      expect(rows).toBeGreaterThan(0);

      for (const r of pkg.resources) {
        expect(r.mediatype).toBe(MEDIA_TYPES[r.format]);
        expect(r.rows, r.name).toBe(rows);
        // the field list comes from the dataset declaration, with descriptions (units where they apply)
        expect(r.schema.fields.map((f) => f.name)).toEqual(ds.columns);
        expect(r.schema.fields.map((f) => f.description)).toEqual(fieldDocsOf(ds).map((f) => f.description));
        expect(r.schema.primaryKey).toEqual(ds.primaryKey);

        // the resource path resolves next to the descriptor; latest, the dated / undated URL serve the same bytes
        const res = await served.req(`/datasets/${ds.topic}/${r.path}`, null);
        expect(res.status, `${ds.topic}/${r.path}`).toBe(200);
        expect(res.headers.get("content-type"), r.name).toBe(CONTENT_TYPES[r.format]);
        const bytes = Buffer.from(await res.arrayBuffer());
        expect(bytes.byteLength).toBe(r.bytes);
        expect(`sha256:${sha256(bytes)}`).toBe(r.hash);
        const latest = await served.req(`/datasets/${ds.topic}/latest.${r.format}`, null);
        expect(latest.status).toBe(200);
        expect(Buffer.from(await latest.arrayBuffer()).equals(bytes), `latest.${r.format}`).toBe(true);
        const direct = await served.req(
          ds.dated ? `/datasets/${ds.topic}/2025-09-07.${r.format}` : `/datasets/${ds.topic}.${r.format}`,
          null,
        );
        expect(direct.status, `${ds.topic} direct ${r.format}`).toBe(200);
        expect(direct.headers.get("content-type")).toBe(CONTENT_TYPES[r.format]);
        expect(Buffer.from(await direct.arrayBuffer()).equals(bytes)).toBe(true);

        if (r.format === "csv")
          expect(bytes.toString("utf8").split("\n")[0]).toMatch(
            new RegExp(
              `^# ballast dataset ${ds.topic} as-of 2025-09-07T00:00:00Z methodology \\S+ inputs sha256:[0-9a-f]{64}$`,
            ),
          );
        const file = join(scratch, `${ds.topic}.${r.format}`);
        writeFileSync(file, bytes);
        const rel = relation(file, r);
        const described = await db.all<{ column_name: string; column_type: string }>(`describe select * from ${rel}`);
        expect(
          described.map((c) => c.column_name),
          r.name,
        ).toEqual(ds.columns);
        if (r.format === "parquet")
          expect(
            described.map((c) => tableTypeOf(c.column_type)),
            r.name,
          ).toEqual(r.schema.fields.map((f) => f.type));
        const [{ n }] = await db.all<{ n: number }>(`select count(*)::integer as n from ${rel}`);
        expect(n, r.name).toBe(rows);
      }

      // the same rows in every format (parquet as written by DuckDB; text formats read with the descriptor's types)
      const pqAll = relation(
        join(scratch, `${ds.topic}.parquet`),
        must(
          pkg.resources.find((r) => r.format === "parquet"),
          `the parquet resource of ${ds.topic}`,
        ),
      );
      // CSV has no null apart from the empty cell (descriptor missingValues [""]): compare with '' as null
      const pqCsv = `(select ${pkg.resources[0].schema.fields.map((f) => (f.type === "string" ? `nullif("${f.name}", '') as "${f.name}"` : `"${f.name}"`)).join(", ")} from ${pqAll})`;
      for (const r of pkg.resources.filter((x) => x.format !== "parquet")) {
        const rel = relation(join(scratch, `${ds.topic}.${r.format}`), r);
        const pq = r.format === "csv" ? pqCsv : pqAll;
        const [{ n }] = await db.all<{ n: number }>(
          `select count(*)::integer as n from ((select * from ${rel} except all select * from ${pq}) union all (select * from ${pq} except all select * from ${rel}))`,
        );
        expect(n, `${r.name} differs from parquet`).toBe(0);
      }
      const key = ds.primaryKey.map((c) => `"${c}"`).join(", ");
      const [{ dupes }] = await db.all<{ dupes: number }>(
        `select count(*)::integer as dupes from (select ${key} from ${pqAll} group by ${key} having count(*) > 1)`,
      );
      expect(dupes, `${ds.topic} primaryKey`).toBe(0);
    });
  }

  it("documents units: USD, bps and Unix seconds fields say so", async () => {
    const fields = async (topic: string) =>
      ((await (await served.req(`/datasets/${topic}/datapackage.json`, null)).json()) as { resources: Resource[] })
        .resources[0].schema.fields;
    expect((await fields("top-stablecoins")).find((f) => f.name === "circulatingUsd")?.unit).toBe("USD");
    expect((await fields("depeg-history")).find((f) => f.name === "peakDeviationBps")?.unit).toBe("bps");
    expect((await fields("freeze-events")).find((f) => f.name === "timestamp")?.unit).toBe("Unix seconds");
  });

  it("answers 400 for an unknown format and 404 for an unknown topic", async () => {
    expect((await served.req("/datasets/top-stablecoins/latest.xlsx", null)).status).toBe(400);
    expect((await served.req("/datasets/no-such-topic/latest.parquet", null)).status).toBe(404);
    expect((await served.req("/datasets/no-such-topic/datapackage.json", null)).status).toBe(404);
  });
});
