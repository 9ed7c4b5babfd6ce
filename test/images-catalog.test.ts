// GET /v1/public/image-models and GET /v1/image/styles: public, and listing only allowlisted
// models whose provider is configured.
import test from "ava";
import { makeHome, startTestGateway } from "./helpers/gateway-harness.js";

test("default-like config: no image provider, empty catalog and styles", async (t) => {
  const gateway = await startTestGateway(await makeHome());
  try {
    const catalog = await fetch(`${gateway.url}/v1/public/image-models`);
    t.is(catalog.status, 200);
    const body = (await catalog.json()) as { models: unknown[]; planLimits: Record<string, { maxImages: number; maxResolution: string }> };
    t.deepEqual(body.models, []);
    t.deepEqual(body.planLimits.free, { maxImages: 1, maxResolution: "1K" });
    t.deepEqual(body.planLimits.max, { maxImages: 10, maxResolution: "4K" });
    const styles = await fetch(`${gateway.url}/v1/image/styles`);
    t.deepEqual(await styles.json(), { styles: [], models: [] });
  } finally {
    await gateway.shutdown();
  }
});

test("lists only allowlisted models of configured providers; styles follow the default model", async (t) => {
  const home = await makeHome((config) => {
    config.providers = {
      openai: { type: "openai", baseUrl: "http://127.0.0.1:9/v1", apiKey: "k" },
      stability: { type: "stability", baseUrl: "http://127.0.0.1:9", apiKey: "k" },
    };
    config.tools.image = { default: "stability/core", allow: ["openai/gpt-image-1", "stability/ultra", "openai/not-in-catalog"] };
  });
  const gateway = await startTestGateway(home);
  try {
    const body = (await (await fetch(`${gateway.url}/v1/public/image-models`)).json()) as {
      models: Array<{ id: string; constraints: Record<string, unknown> }>;
    };
    t.deepEqual(body.models.map((model) => model.id).sort(), ["openai/gpt-image-1", "stability/core", "stability/ultra"]);
    const gpt = body.models.find((model) => model.id === "openai/gpt-image-1")!;
    t.deepEqual(gpt.constraints.negativePrompt, { accepted: false });
    t.false("provider" in gpt);

    const styles = (await (await fetch(`${gateway.url}/v1/image/styles`)).json()) as { styles: string[]; models: Array<{ id: string; styles: string[] }> };
    t.true(styles.styles.length > 0);
    t.true(styles.styles.includes("photographic"));
    t.deepEqual(styles.models.find((model) => model.id === "openai/gpt-image-1")!.styles, []);
    t.deepEqual(styles.models.find((model) => model.id === "stability/core")!.styles, styles.styles);
  } finally {
    await gateway.shutdown();
  }
});

test("a model whose provider is not configured is not listed", async (t) => {
  const home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: "http://127.0.0.1:9/v1", apiKey: "k" } };
    config.tools.image = { default: "openai/gpt-image-1", allow: ["stability/core"] };
  });
  const gateway = await startTestGateway(home);
  try {
    const body = (await (await fetch(`${gateway.url}/v1/public/image-models`)).json()) as { models: Array<{ id: string }> };
    t.deepEqual(
      body.models.map((model) => model.id),
      ["openai/gpt-image-1"],
    );
    const styles = (await (await fetch(`${gateway.url}/v1/image/styles`)).json()) as { styles: string[] };
    t.deepEqual(styles.styles, []);
  } finally {
    await gateway.shutdown();
  }
});
