// gw keys create / set / list with a key's own limits, as a user runs them.
import { mkdirSync, writeFileSync } from "node:fs";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import type { KeyRecord } from "../src/store/records.js";
import { periodOf } from "../src/store/usage-log.js";
import { gw, json, removeTempHomes, tempHome } from "./_gw-cli.js";

test.after.always(() => removeTempHomes());

interface CreatedView {
  key: string;
  prefix: string;
  name: string | null;
  budget: { credits: number; period: string } | null;
  expiresAt: string | null;
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
}

interface ListedView {
  name: string | null;
  prefix: string;
  agent: string;
  plan: string;
  budget: { credits: number; period: string } | null;
  spent: number;
  expiresAt: string | null;
  lastUsedAt: string | null;
  rpm: number | null;
}

async function storedKey(home: string, prefix: string): Promise<KeyRecord> {
  const store = await MetadataStore.open(homePaths(home).metadata);
  try {
    return store.data.keys.find((key) => key.prefix === prefix)!;
  } finally {
    store.close();
  }
}

test("keys create takes a budget, an expiry, model patterns, rpm, tpm and a label; keys set changes and removes them", async (t) => {
  const home = tempHome();
  const before = Date.now();
  const created = await gw(
    [
      "keys",
      "create",
      "--agent",
      "ci",
      "--plan",
      "pro",
      "--name",
      "nightly",
      "--budget",
      "2000000",
      "--expires",
      "30d",
      "--models",
      "openai/*, claude/claude-sonnet-*",
      "--rpm",
      "30",
      "--tpm",
      "50000",
      "--json",
    ],
    { home },
  );
  t.is(created.code, 0, created.stderr);
  const view = json<CreatedView>(created);
  t.like(view, { name: "nightly", budget: { credits: 2_000_000, period: "month" }, models: ["openai/*", "claude/claude-sonnet-*"], rpm: 30, tpm: 50_000 });
  const expires = Date.parse(view.expiresAt!);
  t.true(expires >= before + 30 * 86_400_000 && expires <= Date.now() + 30 * 86_400_000);

  const set = await gw(["keys", "set", view.prefix, "--budget", "500", "--budget-period", "total", "--expires", "2099-01-31", "--rpm", "none"], { home });
  t.is(set.code, 0, set.stderr);
  let stored = await storedKey(home, view.prefix);
  t.deepEqual(stored.budget, { credits: 500, period: "total" });
  t.is(stored.expiresAt, "2099-02-01T00:00:00.000Z", "a date means through that day, UTC");
  t.is(stored.rpm, undefined);
  t.is(stored.tpm, 50_000, "what set was not given stays");

  t.is((await gw(["keys", "set", view.prefix, "--budget-period", "month", "--expires", "never", "--models", "all", "--name", ""], { home })).code, 0);
  stored = await storedKey(home, view.prefix);
  t.deepEqual(stored.budget, { credits: 500, period: "month" }, "the period alone changes, the amount stays");
  t.is(stored.expiresAt, undefined);
  t.is(stored.models, undefined);
  t.is(stored.name, undefined);
});

test("bad limit values are refused with a clear message and nothing is created", async (t) => {
  const home = tempHome();
  const cases: Array<[string[], RegExp]> = [
    [["--expires", "tomorrow"], /--expires "tomorrow": expected a lifetime/],
    [["--expires", "2001-01-01"], /already past/],
    [["--expires", "2027-02-30T00:00:00"], /expected a lifetime/],
    [["--budget", "-5"], /--budget "-5": expected a whole number/],
    [["--budget", "1.5"], /expected a whole number/],
    [["--rpm", "0"], /--rpm "0": expected a whole number >= 1/],
    [["--models", " , "], /give at least one pattern/],
    [["--budget-period", "total"], /--budget-period needs --budget/],
  ];
  for (const [flags, message] of cases) {
    const result = await gw(["keys", "create", "--agent", "x", ...flags], { home });
    t.is(result.code, 2, flags.join(" "));
    t.regex(result.stderr, message, flags.join(" "));
    t.is(result.stdout, "", "no key printed");
  }
  const listed = json<ListedView[]>(await gw(["keys", "list", "--json"], { home }));
  t.is(listed.length, 0);
  const nothing = await gw(["keys", "set", "gw_nope"], { home });
  t.not(nothing.code, 0);
});

test("keys list shows label, plan, budget, what was spent in the budget's period, expiry and last use", async (t) => {
  const home = tempHome();
  const made = json<CreatedView>(await gw(["keys", "create", "--agent", "ci", "--name", "batch", "--budget", "1000", "--json"], { home }));
  const lifetime = json<CreatedView>(await gw(["keys", "create", "--agent", "ci", "--budget", "1000", "--budget-period", "total", "--json"], { home }));
  const idle = json<CreatedView>(await gw(["keys", "create", "--agent", "other", "--expires", "1h", "--json"], { home }));
  const usageDir = homePaths(home).usageDir;
  mkdirSync(usageDir, { recursive: true });
  const month = periodOf(new Date());
  const row = (time: string, keyPrefix: string, credits: number) =>
    `${JSON.stringify({ id: `${keyPrefix}${time}`, time, agent: "agt", keyPrefix, endpoint: "chat.completions", model: "m", provider: "p", units: {}, credits, requestId: "r" })}\n`;
  writeFileSync(`${usageDir}/2020-01.jsonl`, row("2020-01-05T00:00:00.000Z", lifetime.prefix, 300) + row("2020-01-06T00:00:00.000Z", made.prefix, 999));
  writeFileSync(
    `${usageDir}/${month}.jsonl`,
    row(`${month}-01T01:00:00.000Z`, made.prefix, 40) + row(`${month}-01T02:00:00.000Z`, made.prefix, 2) + row(`${month}-01T03:00:00.000Z`, lifetime.prefix, 7),
  );
  const listed = json<ListedView[]>(await gw(["keys", "list", "--json"], { home }));
  const byPrefix = new Map(listed.map((key) => [key.prefix, key]));
  t.like(byPrefix.get(made.prefix), { name: "batch", agent: "ci", plan: "free", spent: 42, lastUsedAt: `${month}-01T02:00:00.000Z` });
  t.like(byPrefix.get(lifetime.prefix), { spent: 307, budget: { credits: 1000, period: "total" } });
  t.like(byPrefix.get(idle.prefix), { spent: 0, lastUsedAt: null, agent: "other" });

  const table = await gw(["keys", "list"], { home });
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split("\n");
  t.regex(lines[0]!, /^NAME\s+PREFIX\s+AGENT\s+PLAN\s+RPM\s+TPM\s+MODELS\s+BUDGET\s+SPENT\s+EXPIRES\s+LAST USED$/);
  const madeLine = lines.find((line) => line.includes(made.prefix))!;
  t.regex(madeLine, /^batch\s+gw_\w+\s+ci\s+free\s+-\s+-\s+-\s+1000\/month\s+42\s+never\s+\S+T02:00:00\.000Z$/);
  t.regex(lines.find((line) => line.includes(idle.prefix))!, /\d{4}-\d{2}-\d{2}T[\d:.]+Z\s+never$/, "expiry shown, never used");
});
