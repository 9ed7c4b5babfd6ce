// A hand-edited config.json naming a provider `type` gw does not implement still loads (the
// provider is skipped, its routes fail over), but not silently: the server warns at each load and
// reload, once per provider, naming it, its type and the known types; `gw doctor` fails the same way.
import test from "ava";
import OpenAI from "openai";
import { startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, editHomeConfig, gw, json, makeHome, quietLogger, startTestGateway } from "./helpers/gateway-harness.js";

interface DoctorView {
  ok: boolean;
  checks: Array<{ name: string; status: string; detail: string }>;
}

/** A working `fake` provider beside `future`, whose type no version of gw so far implements. */
function homeWithUnknownType(upstreamUrl: string): Promise<string> {
  return makeHome((config) => {
    config.providers = {
      fake: { type: "openai", baseUrl: upstreamUrl, apiKey: "sk-known-type-0123" },
      future: { type: "mistral-v9", baseUrl: upstreamUrl, apiKey: "sk-unknown-type-0123" },
    };
    config.routes = [
      { prefix: "fake/", provider: "fake" },
      { prefix: "future/", provider: "future" },
    ];
  });
}

const unknownTypeWarnings = (from: number) => quietLogger.lines.slice(from).filter((line) => line.startsWith("warn") && line.includes("mistral-v9"));

test.serial("the server warns once per load about a provider of an unknown type, naming it and the known types", async (t) => {
  const fake = await startFakeOpenAI();
  const home = await homeWithUnknownType(fake.url);
  const logged = quietLogger.lines.length;
  const gateway = await startTestGateway(home);
  try {
    const atStart = unknownTypeWarnings(logged);
    t.is(atStart.length, 1, quietLogger.lines.slice(logged).join("\n"));
    t.regex(atStart[0]!, /provider "future"/);
    t.regex(atStart[0]!, /type "mistral-v9"/);
    t.regex(atStart[0]!, /Known types: .*\banthropic\b.*\bopenai\b/);
    t.false(atStart[0]!.includes("sk-unknown-type-0123"), "never the provider's key");

    // The other providers serve as before.
    const client = new OpenAI({ baseURL: gateway.v1, apiKey: await addKey(home, "types", "pro"), maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: "fake/m", messages: [{ role: "user", content: "x" }] });
    t.truthy(answer.choices[0]);

    // A reload still carrying it says so again, once; a reload that fixes the type says nothing.
    editHomeConfig(home, (config) => config.routes.push({ prefix: "other/", provider: "fake" }));
    await eventually(() => quietLogger.lines.slice(logged).filter((line) => line === "info config reloaded").length === 1);
    t.is(unknownTypeWarnings(logged).length, 2, quietLogger.lines.slice(logged).join("\n"));
    editHomeConfig(home, (config) => {
      config.providers.future.type = "openai";
    });
    await eventually(() => quietLogger.lines.slice(logged).filter((line) => line === "info config reloaded").length === 2);
    t.is(unknownTypeWarnings(logged).length, 2, quietLogger.lines.slice(logged).join("\n"));
  } finally {
    await gateway.shutdown();
    await fake.close();
  }
});

test("gw doctor fails naming the provider of an unknown type, its type and the known types; passes once it is fixed", async (t) => {
  const home = await homeWithUnknownType("http://127.0.0.1:9");
  const failing = await gw(["doctor", "--json"], { home });
  t.is(failing.code, 1, failing.stderr);
  const report = json<DoctorView>(failing);
  t.false(report.ok);
  const check = report.checks.find((entry) => entry.name === "provider types");
  t.is(check?.status, "error", JSON.stringify(report.checks));
  t.regex(check?.detail ?? "", /provider "future" has type "mistral-v9"/);
  t.regex(check?.detail ?? "", /Known types: .*\banthropic\b.*\bopenai\b/);
  t.notRegex(check?.detail ?? "", /provider "fake"/);
  const plain = await gw(["doctor"], { home });
  t.is(plain.code, 1);
  t.regex(plain.stdout, /FAIL\s+provider types/);

  editHomeConfig(home, (config) => {
    config.providers.future.type = "openai";
  });
  const fixed = json<DoctorView>(await gw(["doctor", "--json"], { home }));
  t.is(fixed.checks.find((entry) => entry.name === "provider types")?.status, "ok", JSON.stringify(fixed.checks));
});
