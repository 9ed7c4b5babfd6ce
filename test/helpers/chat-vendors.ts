// A gw routing to one fake of each kind of chat upstream: Anthropic (native messages), Gemini and
// an OpenAI-compatible server, at `claude/`, `google/` and `compat/`, each with one priced model.
// The endpoints that convert between dialects (messages, responses) are tested against all three.
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/anthropic.js";
import { type FakeGemini, startFakeGemini } from "../fakes/gemini.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { makeHome, startTestGateway, type TestGateway } from "./gateway-harness.js";

export const CHAT_VENDOR_MODELS = {
  anthropic: "claude/claude-sonnet-4-5",
  openai: "compat/gpt-x",
  gemini: "google/gemini-2.5-flash",
} as const;

/** Every model's price: credits are 3 per input token and 15 per output token at the default rate. */
export const CHAT_VENDOR_PRICING = { input_per_mtok: 3, output_per_mtok: 15 };

export interface ChatVendors {
  anthropic: FakeAnthropic;
  gemini: FakeGemini;
  openai: FakeOpenAI;
  gateway: TestGateway;
  home: string;
  /** Forget every fake's requests and queued behaviours (before each test). */
  reset(): void;
  close(): Promise<void>;
}

export async function startChatVendors(options: { contextLength?: number } = {}): Promise<ChatVendors> {
  const contextLength = options.contextLength ?? 100_000;
  const anthropic = await startFakeAnthropic();
  const gemini = await startFakeGemini();
  const openai = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.providers = {
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-upstream" },
      google: { type: "gemini", baseUrl: gemini.url, apiKey: "AIza-upstream" },
      compat: { type: "openai", baseUrl: openai.url, apiKey: "sk-compat" },
    };
    config.routes = [
      { prefix: "claude/", provider: "claude", priority: 10 },
      { prefix: "google/", provider: "google", priority: 10 },
      { prefix: "compat/", provider: "compat", priority: 10 },
    ];
    config.models = [
      { id: CHAT_VENDOR_MODELS.anthropic, name: "Claude", context_length: Math.max(contextLength, 200_000), pricing: CHAT_VENDOR_PRICING },
      { id: CHAT_VENDOR_MODELS.openai, name: "GPT X", context_length: contextLength, pricing: CHAT_VENDOR_PRICING },
      { id: CHAT_VENDOR_MODELS.gemini, name: "Gemini", context_length: contextLength, pricing: CHAT_VENDOR_PRICING },
    ];
  });
  const gateway = await startTestGateway(home);
  return {
    anthropic,
    gemini,
    openai,
    gateway,
    home,
    reset() {
      anthropic.reset();
      gemini.reset();
      openai.reset();
    },
    async close() {
      await gateway.shutdown();
      await anthropic.close();
      await gemini.close();
      await openai.close();
    },
  };
}
