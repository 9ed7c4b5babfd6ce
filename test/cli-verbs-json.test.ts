// One verb per action (`list`, `remove`) with the first spellings kept as aliases, and `--json`
// printed from what a command returns: the same bytes as before, errors still on stderr.
import test from "ava";
import { gw, removeTempHomes, tempHome } from "./_gw-cli.js";

test.after.always(removeTempHomes);

test("storage and video list with `list` and delete with `remove`; `ls` and `rm` still run the same commands", async (t) => {
  const [storageHelp, videoHelp] = await Promise.all([gw(["help", "storage"]), gw(["help", "video"])]);
  t.is(storageHelp.code, 0, storageHelp.stderr);
  t.regex(storageHelp.stdout, /storage list\b/);
  t.regex(storageHelp.stdout, /storage remove\b/);
  t.is(videoHelp.code, 0, videoHelp.stderr);
  t.regex(videoHelp.stdout, /video list\b/);

  // Nothing listens on port 1: each spelling gets as far as calling the gateway, and says so alike.
  const gateway = ["--base-url", "http://127.0.0.1:1", "--api-key", "gw_test"];
  const pairs = [
    [
      ["storage", "list"],
      ["storage", "ls"],
    ],
    [
      ["storage", "remove", "file_1"],
      ["storage", "rm", "file_1"],
    ],
    [
      ["video", "list"],
      ["video", "ls"],
    ],
  ];
  for (const [long, short] of pairs) {
    const [canonical, alias] = await Promise.all([gw([...long!, ...gateway]), gw([...short!, ...gateway])]);
    t.is(canonical.code, 1, canonical.stderr);
    t.regex(canonical.stderr, /127\.0\.0\.1:1/);
    t.deepEqual(alias, canonical, short!.join(" "));
  }
});

test("--json prints the result as two-space JSON and a newline; errors under --json stay a message on stderr", async (t) => {
  const home = tempHome();
  t.is((await gw(["init", "--home", home])).code, 0);

  const plans = await gw(["plans", "list", "--json", "--home", home]);
  t.is(plans.code, 0, plans.stderr);
  t.is(plans.stdout, `${JSON.stringify(JSON.parse(plans.stdout), null, 2)}\n`);
  t.true((JSON.parse(plans.stdout) as Array<{ name: string }>).some((plan) => plan.name === "free"));

  const missing = await gw(["plans", "remove", "nosuch", "--json", "--home", home]);
  t.is(missing.code, 1);
  t.is(missing.stdout, "");
  t.regex(missing.stderr, /nosuch/);
  t.false(missing.stderr.trimStart().startsWith("{"), missing.stderr);

  const usage = await gw(["routes", "add", "fast", "--json", "--home", home]);
  t.is(usage.code, 2);
  t.is(usage.stdout, "");
  t.regex(usage.stderr, /--provider/);
});
