// `gw plans set` refusing unknown names (new plans take --create) and `gw plans remove`, run as
// subprocesses of the built CLI against a temp GW_HOME.

import { readFileSync, writeFileSync } from "node:fs";
import test from "ava";
import { initHome } from "../src/config/init-home.js";
import { homePaths } from "../src/config/paths.js";
import { gw, json, removeTempHomes, tempHome } from "./_gw-cli.js";

test.after.always(() => removeTempHomes());

interface PlanView {
  name: string;
  aliases: string[];
  monthlyCredits: number;
  requestsPerMinute: number;
}

async function initialisedHome(): Promise<string> {
  const home = tempHome();
  await initHome(home);
  return home;
}

function configText(home: string): string {
  return readFileSync(homePaths(home).config, "utf8");
}

function rawConfig(home: string): { plans: Record<string, unknown>; planAliases?: Record<string, string> } {
  return JSON.parse(configText(home));
}

function editRawConfig(home: string, edit: (raw: Record<string, unknown>) => void): void {
  const raw = JSON.parse(configText(home)) as Record<string, unknown>;
  edit(raw);
  writeFileSync(homePaths(home).config, `${JSON.stringify(raw, null, 2)}\n`);
}

async function planNames(home: string): Promise<string[]> {
  const listed = await gw(["plans", "list", "--json"], { home });
  if (listed.code !== 0) throw new Error(listed.stderr);
  return json<PlanView[]>(listed).map((plan) => plan.name);
}

test("plans set refuses an unknown plan or alias, naming the known ones, and changes nothing", async (t) => {
  const home = await initialisedHome();
  const before = configText(home);
  const [typo, aliasTypo, agentMove] = await Promise.all([
    gw(["plans", "set", "por", "--monthly-credits", "5"], { home }),
    gw(["plans", "set", "assistent", "--requests-per-minute", "10", "--json"], { home }),
    gw(["plans", "set", "engneer", "--agent", "nobody"], { home }),
  ]);
  for (const result of [typo, aliasTypo, agentMove]) {
    t.is(result.code, 1, result.stdout);
    t.regex(result.stderr, /unknown plan "\w+": known plans are free, pro, max, assistant \(= pro\), engineer \(= max\)/);
    t.is(result.stdout, "");
  }
  t.regex(typo.stderr, /--create/, "says how to define a new plan");
  t.is(configText(home), before, "config.json unchanged");
  t.deepEqual(await planNames(home), ["free", "pro", "max"]);
});

test("plans set --create defines a new plan based on free; later changes need no --create", async (t) => {
  const home = await initialisedHome();
  const created = await gw(["plans", "set", "gold", "--create", "--monthly-credits", "5", "--json"], { home });
  t.is(created.code, 0, created.stderr);
  t.like(json(created), { plan: "gold", created: true, limits: { monthlyCredits: 5, requestsPerMinute: 20 } });
  t.deepEqual(rawConfig(home).plans.gold, { monthlyCredits: 5 });

  const changed = await gw(["plans", "set", "gold", "--requests-per-minute", "99"], { home });
  t.is(changed.code, 0, changed.stderr);
  t.deepEqual(rawConfig(home).plans.gold, { monthlyCredits: 5, requestsPerMinute: 99 });

  const bare = await gw(["plans", "set", "silver", "--create"], { home });
  t.is(bare.code, 0, bare.stderr);
  t.regex(bare.stdout, /created plan silver/);
  t.deepEqual(await planNames(home), ["free", "pro", "max", "gold", "silver"]);

  const badName = await gw(["plans", "set", "Big Plan", "--create"], { home });
  t.is(badName.code, 2);
  t.regex(badName.stderr, /lowercase letters, digits/);
});

test("plans remove deletes an unused plan and the aliases that named it", async (t) => {
  const home = await initialisedHome();
  t.is((await gw(["plans", "set", "gold", "--create", "--monthly-credits", "5"], { home })).code, 0);
  editRawConfig(home, (raw) => {
    raw.planAliases = { assistant: "pro", engineer: "max", vip: "gold" };
  });
  const viaAlias = await gw(["plans", "remove", "vip"], { home });
  t.is(viaAlias.code, 1);
  t.regex(viaAlias.stderr, /"vip" is an alias of plan gold/);

  const removed = await gw(["plans", "remove", "gold", "--json"], { home });
  t.is(removed.code, 0, removed.stderr);
  t.deepEqual(json(removed), { plan: "gold", removedAliases: ["vip"] });
  const raw = rawConfig(home);
  t.false("gold" in raw.plans);
  t.deepEqual(raw.planAliases, { assistant: "pro", engineer: "max" }, "no alias left pointing at nothing");
  t.deepEqual(await planNames(home), ["free", "pro", "max"], "the config still loads");

  const again = await gw(["plans", "remove", "gold"], { home });
  t.is(again.code, 1);
  t.regex(again.stderr, /unknown plan "gold": known plans are free, pro, max/);
});

test("plans remove refuses a plan agents use, naming them, and the built-in plans, saying why", async (t) => {
  const home = await initialisedHome();
  t.is((await gw(["plans", "set", "gold", "--create"], { home })).code, 0);
  const [carol, dave] = await Promise.all([
    gw(["agents", "create", "carol", "--plan", "gold"], { home }),
    gw(["agents", "create", "dave", "--plan", "gold"], { home }),
  ]);
  t.is(carol.code, 0, carol.stderr);
  t.is(dave.code, 0, dave.stderr);
  const before = configText(home);

  const inUse = await gw(["plans", "remove", "gold"], { home });
  t.is(inUse.code, 1);
  t.regex(inUse.stderr, /plan "gold" is used by agents? (carol, dave|dave, carol)/);
  t.regex(inUse.stderr, /gw plans set \S+ --agent/);

  const builtIns = await Promise.all(["free", "pro", "max"].map((plan) => gw(["plans", "remove", plan], { home })));
  for (const result of builtIns) {
    t.is(result.code, 1);
    t.regex(result.stderr, /built in/);
    t.regex(result.stderr, /gw plans set/);
  }
  t.is(configText(home), before, "nothing refused was written");

  t.is((await gw(["plans", "set", "pro", "--agent", "carol"], { home })).code, 0);
  t.is((await gw(["plans", "set", "free", "--agent", "dave"], { home })).code, 0);
  const removed = await gw(["plans", "remove", "gold"], { home });
  t.is(removed.code, 0, removed.stderr);
  t.regex(removed.stdout, /removed plan gold/);
});
