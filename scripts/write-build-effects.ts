import { regenerateExpected } from "../test/helpers/build-effects-tree.ts";

// Rewrites the expected tree of test/unit/build-effects.test.ts (test/fixtures/build-effects/expected/)
// from the fixture build: run it after an intended change to the build output, e.g. a new artifact,
// then read the diff. `npx tsx scripts/write-build-effects.ts`.
const { buildId, keys } = await regenerateExpected();
process.stdout.write(`wrote test/fixtures/build-effects/expected: ${keys} keys of build ${buildId}\n`);
