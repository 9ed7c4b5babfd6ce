// Runs the ava suite with the TAP reporter (stable to parse), passes its output through, and
// ends with the plain line `N passed, N failed`. A run that executed no test fails.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const args = ["ava", "--tap", ...process.argv.slice(2)];
const child = spawn("npx", args, { stdio: ["ignore", "pipe", "inherit"], env: process.env });
let passed = 0;
let failed = 0;
let reportedPass = null;
let reportedFail = null;
createInterface({ input: child.stdout }).on("line", (line) => {
  process.stdout.write(`${line}\n`);
  if (/^ok \d+/.test(line)) passed += 1;
  else if (/^not ok \d+/.test(line)) failed += 1;
  const pass = /^# pass (\d+)/.exec(line);
  const fail = /^# fail (\d+)/.exec(line);
  if (pass) reportedPass = Number(pass[1]);
  if (fail) reportedFail = Number(fail[1]);
});
child.on("close", (code) => {
  const passes = reportedPass ?? passed;
  const failures = Math.max(reportedFail ?? 0, failed);
  process.stdout.write(`\n${passes} passed, ${failures} failed\n`);
  if (passes + failures === 0) process.exit(1);
  process.exit(code === 0 && failures === 0 ? 0 : 1);
});
