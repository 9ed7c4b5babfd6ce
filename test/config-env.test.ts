// `${NAME}` references to variables the environment does not set: the server warns once per
// variable (naming it and the config path that uses it), `gw doctor` fails naming it, and a set
// variable is neither warned about nor ever printed.
import test from "ava";
import OpenAI from "openai";
import { startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, editHomeConfig, gw, json, makeHome, quietLogger, startTestGateway } from "./helpers/gateway-harness.js";

const UNSET = "GW_TEST_UNSET_KEY";
const SECRET = "sk-test-env-value-0123456789";

interface DoctorCheckView {
  name: string;
  status: string;
  detail: string;
}
interface DoctorView {
  ok: boolean;
  checks: DoctorCheckView[];
}

/** A home whose only provider takes its key from `${GW_TEST_UNSET_KEY}`. */
function homeWithEnvKey(upstreamUrl = "http://127.0.0.1:9"): Promise<string> {
  return makeHome((config) => {
    config.providers = { envkeyed: { type: "openai", baseUrl: upstreamUrl, apiKey: `\${${UNSET}}` } };
    config.routes = [{ prefix: "envkeyed/", provider: "envkeyed" }];
  });
}

const warningsNaming = (name: string, from = 0) => quietLogger.lines.slice(from).filter((line) => line.startsWith("warn") && line.includes(name));

test.serial("an unset variable is warned about once, naming it and the path, across reloads and requests", async (t) => {
  t.is(process.env[UNSET], undefined, "the test needs the variable unset");
  const fake = await startFakeOpenAI();
  const home = await homeWithEnvKey(fake.url);
  const logged = quietLogger.lines.length;
  const gateway = await startTestGateway(home);
  try {
    const warnings = warningsNaming(UNSET, logged);
    t.is(warnings.length, 1, quietLogger.lines.slice(logged).join("\n"));
    t.true(warnings[0]!.includes("providers.envkeyed.apiKey"), warnings[0]);

    // A request and a reload (the variable still unset) do not repeat it.
    const key = await addKey(home, "envtest", "pro");
    const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
    await client.chat.completions.create({ model: "envkeyed/m", messages: [{ role: "user", content: "x" }] });
    editHomeConfig(home, (config) => config.routes.push({ prefix: "other/", provider: "envkeyed" }));
    await eventually(() => quietLogger.lines.slice(logged).includes("info config reloaded"));
    t.is(warningsNaming(UNSET, logged).length, 1, quietLogger.lines.slice(logged).join("\n"));
  } finally {
    await gateway.shutdown();
    await fake.close();
  }
});

test.serial("a set variable is not warned about, reaches the upstream, and never appears in the log", async (t) => {
  const fake = await startFakeOpenAI();
  const home = await homeWithEnvKey(fake.url);
  const logged = quietLogger.lines.length;
  process.env[UNSET] = SECRET;
  const gateway = await startTestGateway(home);
  try {
    const key = await addKey(home, "envset", "pro");
    const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
    await client.chat.completions.create({ model: "envkeyed/m", messages: [{ role: "user", content: "x" }] });
    t.is(fake.requests[0]!.headers.authorization, `Bearer ${SECRET}`);
    t.deepEqual(warningsNaming(UNSET, logged), []);
    t.false(quietLogger.lines.join("\n").includes(SECRET));
  } finally {
    delete process.env[UNSET];
    await gateway.shutdown();
    await fake.close();
  }
});

test("gw doctor fails naming an unset variable, passes that check once it is set, never prints the value", async (t) => {
  const home = await homeWithEnvKey();
  const [unset, set, plain] = await Promise.all([
    gw(["doctor", "--json"], { home, env: { [UNSET]: undefined } }),
    gw(["doctor", "--json"], { home, env: { [UNSET]: SECRET } }),
    gw(["doctor"], { home, env: { [UNSET]: undefined } }),
  ]);

  t.is(unset.code, 1, unset.stderr);
  const failing = json<DoctorView>(unset);
  t.false(failing.ok);
  const failed = failing.checks.filter((check) => check.status === "error");
  t.is(failed.length, 1, JSON.stringify(failing.checks));
  t.true(failed[0]!.name.includes(UNSET) || failed[0]!.detail.includes(UNSET), JSON.stringify(failed[0]));
  t.true(failed[0]!.detail.includes(UNSET), failed[0]!.detail);
  t.true(failed[0]!.detail.includes("providers.envkeyed.apiKey"), failed[0]!.detail);
  t.is(plain.code, 1);
  t.regex(plain.stdout, new RegExp(`FAIL\\s+.*${UNSET}`));

  t.is(set.code, 0, set.stdout);
  const passing = json<DoctorView>(set);
  t.true(passing.ok);
  const check = passing.checks.find((entry) => entry.name === failed[0]!.name);
  t.is(check?.status, "ok", JSON.stringify(passing.checks));
  t.false(set.stdout.includes(SECRET), "the value of a set variable is never printed");
  t.false(set.stderr.includes(SECRET));
});
