// A gateway for billing tests: one OpenAI-compatible fake (and an Anthropic fake) behind priced
// models, plans with exact allowances, and readers for the usage rows and balances.
import { readFileSync, writeFileSync } from "node:fs";
import { loadConfigFile } from "../../src/config/load-config.js";
import { homePaths } from "../../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../../src/store/usage-log.js";
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/anthropic.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { addKey, makeHome, type RawConfig, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";

export interface MeteredGateway {
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  gateway: TestGateway;
  home: string;
  /** A key for a new agent on a plan with exactly `credits` a month. */
  keyWithCredits(agent: string, credits: number): Promise<string>;
  rows(agent: string): UsageRow[];
  used(agent: string): number;
  /** POST /v1/chat/completions with `key`, as sent. */
  chat(key: string, body: Record<string, unknown>): Promise<Response>;
  /** POST /anthropic/v1/messages with `key`, as sent. */
  messages(key: string, body: Record<string, unknown>): Promise<Response>;
  close(): Promise<void>;
}

/** Plans are made per agent so that every test has the allowance it needs. */
export async function startMeteredGateway(edit?: (config: RawConfig) => void): Promise<MeteredGateway> {
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = {
      up: { type: "openai", baseUrl: openai.url, apiKey: "sk-up" },
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-up" },
    };
    config.routes = [
      { prefix: "m/", provider: "up", priority: 1 },
      { prefix: "c/", provider: "claude", priority: 1 },
    ];
    config.models = [
      { id: "m/cheap", name: "Cheap", context_length: 200_000, max_output_tokens: 5000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } },
      { id: "m/vision", name: "Vision", context_length: 128_000, input_modalities: ["text", "image"], pricing: { input_per_mtok: 2.5, output_per_mtok: 10 } },
      {
        id: "m/cached",
        name: "Cached",
        context_length: 200_000,
        pricing: { input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3, cache_write_per_mtok: 3.75 },
      },
      {
        id: "c/cached",
        name: "Claude cached",
        context_length: 200_000,
        pricing: { input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3, cache_write_per_mtok: 3.75 },
      },
    ];
    edit?.(config);
  });
  const gateway = await startTestGateway(home);
  const agentIds = new Map<string, string>();
  const idOf = (agent: string) => {
    const id = agentIds.get(agent) ?? gateway.gateway.store.data.agents.find((entry) => entry.name === agent)?.id;
    if (!id) throw new Error(`no agent ${agent}`);
    agentIds.set(agent, id);
    return id;
  };
  return {
    openai,
    anthropic,
    gateway,
    home,
    async keyWithCredits(agent, credits) {
      // The agent gets a plan of its own, named after it, applied at once (not when the watcher sees it).
      const file = homePaths(home).config;
      const config = JSON.parse(readFileSync(file, "utf8")) as RawConfig;
      config.plans[agent] = { monthlyCredits: credits, freeTierOnly: false, requestsPerMinute: 6000 };
      writeFileSync(file, JSON.stringify(config, null, 2));
      gateway.gateway.applyConfig(loadConfigFile(file));
      return addKey(home, agent, agent);
    },
    rows: (agent) => UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date())).filter((row) => row.agent === idOf(agent)),
    used: (agent) => gateway.gateway.state.usageLog!.creditsUsed(idOf(agent), periodOf(new Date())),
    chat: (key, body) =>
      fetch(`${gateway.v1}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    messages: (key, body) =>
      fetch(`${gateway.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    async close() {
      await gateway.shutdown();
      await openai.close();
      await anthropic.close();
    },
  };
}

/** Every top-level field some OpenAI-compatible server reads as (or instead of) its output cap. */
const OUTPUT_CAP_FIELDS = [
  "max_tokens",
  "max_completion_tokens",
  "max_output_tokens",
  "max_new_tokens",
  "n_predict",
  "max_length",
  "auto_max_new_tokens",
  "n_cmpl",
];

/** The output-cap fields a request body carries, with their values. */
export function capsOf(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(OUTPUT_CAP_FIELDS.filter((field) => field in body).map((field) => [field, body[field]]));
}
