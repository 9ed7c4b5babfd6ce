// The suite's own waiting and cleanup helpers: eventually() (the one way a test polls) and the
// temp folders removed when a test process ends.
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { eventually } from "./helpers/eventually.js";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";

test("eventually returns the probe's first accepted value, trying again after falsy values and errors", async (t) => {
  let calls = 0;
  const value = await eventually(
    () => {
      calls += 1;
      if (calls === 1) throw new Error("not yet");
      return calls === 2 ? 0 : { calls };
    },
    { intervalMs: 1 },
  );
  t.deepEqual(value, { calls: 3 });
  const counted = await eventually(async () => (calls += 1), { until: (seen) => seen >= 6, intervalMs: 1 });
  t.is(counted, 6);
});

test("eventually gives up at its deadline, naming what it waited for and the last value or error", async (t) => {
  const timedOut = await t.throwsAsync(eventually(() => ({ state: "running" }), { what: "the job to finish", until: () => false, timeoutMs: 50 }));
  t.regex(timedOut.message, /timed out after 0\.05 s waiting for the job to finish; last saw the value \{ state: 'running' \}/);
  const failing = await t.throwsAsync(
    eventually(
      () => {
        throw new Error("connection refused");
      },
      { what: "the server", timeoutMs: 50 },
    ),
  );
  t.regex(failing.message, /waiting for the server; last saw the error Error: connection refused/);
});

test("temp folders are made empty under the temp directory and removed with what they hold", (t) => {
  const directory = tempDir("gw-helpers-");
  t.true(path.basename(directory).startsWith("gw-helpers-"));
  writeFileSync(path.join(directory, "file"), "x");
  removeTempDirs();
  t.false(existsSync(directory));
});
