// `gw help`, `--help` and mistyped commands, run as a user would (the built CLI in a subprocess).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import test from "ava";
import { type GwResult, gw } from "./_gw-cli.js";

const bin = fileURLToPath(new URL("../bin/run.js", import.meta.url));

/**
 * Run gw with stdin an open pipe that never ends (a script or CI job that forgot `< /dev/null`).
 * A prompt would wait on it forever: a run that asks a question (oclif's "(Y/n)") is killed at
 * once and reported as `prompted`; one that does not simply exits by itself.
 */
function gwWithOpenStdin(args: string[]): Promise<GwResult & { prompted: boolean }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_ENV; // as in _gw-cli.ts: a user's shell runs the built commands
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let prompted = false;
    const watch = () => {
      if (!prompted && /\(y\/n\)/i.test(stdout + stderr)) {
        prompted = true;
        child.kill("SIGKILL");
      }
    };
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      watch();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      watch();
    });
    child.on("close", (code) => {
      child.stdin.destroy();
      resolve({ code: code ?? -1, stdout, stderr, prompted });
    });
  });
}

test("gw help exits 0 and lists the topics and commands", async (t) => {
  const result = await gw(["help"]);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /TOPICS/);
  for (const topic of ["agents", "keys", "plans", "providers", "routes", "tools", "storage", "image"]) {
    t.regex(result.stdout, new RegExp(`^\\s+${topic}\\s`, "m"), `topic ${topic}`);
  }
  t.regex(result.stdout, /^\s+models\s/m);
  t.notRegex(result.stderr, /not found/);
});

test("gw help storage shows the storage commands", async (t) => {
  const result = await gw(["help", "storage"]);
  t.is(result.code, 0, result.stderr);
  for (const command of ["upload", "ls", "get", "url", "rm", "quota"]) t.regex(result.stdout, new RegExp(`storage ${command}\\b`), command);
});

test("gw help image, gw image --help and gw --help show real help", async (t) => {
  const [helpImage, imageHelp, rootHelp, commandHelp] = await Promise.all([
    gw(["help", "image"]),
    gw(["image", "--help"]),
    gw(["--help"]),
    gw(["help", "image", "generate"]),
  ]);
  for (const result of [helpImage, imageHelp]) {
    t.is(result.code, 0, result.stderr);
    for (const command of ["generate", "edit", "upscale", "remove-background", "describe"]) t.regex(result.stdout, new RegExp(`image ${command}\\b`), command);
  }
  t.is(rootHelp.code, 0, rootHelp.stderr);
  t.regex(rootHelp.stdout, /USAGE[\s\S]*TOPICS[\s\S]*COMMANDS/);
  t.is(commandHelp.code, 0, commandHelp.stderr);
  t.regex(commandHelp.stdout, /USAGE\s+\$ gw image generate/);
  t.regex(commandHelp.stdout, /--aspect-ratio/);
});

test("a mistyped command with stdin not a terminal suggests the command and exits non-zero without waiting", async (t) => {
  const result = await gwWithOpenStdin(["modles"]);
  t.false(result.prompted, `gw asked for input: ${result.stderr}`);
  t.not(result.code, 0);
  t.regex(result.stderr, /did you mean "?models"?/i);
  t.is(result.stdout, "");
});

test("a mistyped topic or subcommand is suggested with gw's space separator", async (t) => {
  const [topic, subcommand, unrelated] = await Promise.all([
    gwWithOpenStdin(["storag", "ls"]),
    gwWithOpenStdin(["plans", "lst"]),
    gwWithOpenStdin(["qqqqqqqqqqqq"]),
  ]);
  for (const result of [topic, subcommand, unrelated]) {
    t.false(result.prompted);
    t.not(result.code, 0);
    t.is(result.stdout, "");
  }
  t.regex(topic.stderr, /did you mean "storage ls"/i);
  t.regex(subcommand.stderr, /did you mean "plans list"/i);
  t.notRegex(unrelated.stderr, /did you mean/i, "nothing close enough: no guess");
  t.regex(unrelated.stderr, /gw help/);
});
