// POST /v1/image/generations end to end against the OpenAI Images and Stability fakes: real
// pictures decoded with sharp, every error row, billing rows, refusals, storage of the results.
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { type FakeStability, startFakeStability } from "./fakes/stability.js";
import { addKey, makeHome, quietLogger, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

interface Setup {
  gateway: TestGateway;
  openai: FakeOpenAIImages;
  stability: FakeStability;
  keys: { free: string; pro: string; max: string };
}

async function setup(edit?: (config: RawConfig) => void): Promise<Setup> {
  const openai = await startFakeOpenAIImages();
  const stability = await startFakeStability();
  const home = await makeHome((config) => {
    config.providers = {
      openai: { type: "openai", baseUrl: openai.url, apiKey: "test-key", upstream: { retries: 0 } },
      stability: { type: "stability", baseUrl: stability.url, apiKey: "test-key", upstream: { retries: 0 } },
    };
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/dall-e-3", "stability/core", "stability/sd3"] };
    edit?.(config);
  });
  const keys = { free: await addKey(home, "agent-free", "free"), pro: await addKey(home, "agent-pro", "pro"), max: await addKey(home, "agent-max", "max") };
  const gateway = await startTestGateway(home);
  return { gateway, openai, stability, keys };
}

async function teardown(setup: Setup): Promise<void> {
  await setup.gateway.shutdown();
  await setup.openai.close();
  await setup.stability.close();
}

async function withSetup(run: (setup: Setup) => Promise<void>, edit?: (config: RawConfig) => void): Promise<void> {
  const current = await setup(edit);
  try {
    await run(current);
  } finally {
    await teardown(current);
  }
}

interface ResultBody {
  id: string;
  created: number;
  model: string;
  data: Array<{ b64_json: string; media_type: string; revised_prompt: string; asset_id?: string }>;
  refusal?: string;
  timing: { total_ms: number; upstream_ms: number };
  error?: { message: string; type: string; code: string; param?: string; provider?: string };
}

async function generate(gateway: TestGateway, key: string, body: Record<string, unknown>): Promise<{ status: number; headers: Headers; body: ResultBody }> {
  const response = await fetch(`${gateway.url}/v1/image/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ResultBody };
}

/** The image rows of this test's own home. */
function usageRows(gateway: TestGateway): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "image.generations");
}

async function decode(b64: string): Promise<Awaited<ReturnType<ReturnType<typeof sharp>["metadata"]>>> {
  return sharp(Buffer.from(b64, "base64")).metadata();
}

test("default output is webp at the model's default size, stored, billed, with trace id", async (t) => {
  await withSetup(async ({ gateway, openai, keys }) => {
    const { status, headers, body } = await generate(gateway, keys.pro, { prompt: "a red fox" });
    t.is(status, 200, JSON.stringify(body));
    t.is(body.id, headers.get("x-request-id") ?? "");
    t.is(body.model, "openai/gpt-image-1");
    t.is(typeof body.created, "number");
    t.is(body.data.length, 1);
    const item = body.data[0]!;
    t.is(item.media_type, "image/webp");
    const meta = await decode(item.b64_json);
    t.is(meta.format, "webp");
    t.is(meta.width, 1024);
    t.is(meta.height, 1024);
    t.is(item.revised_prompt, "a red fox");
    t.truthy(item.asset_id);
    t.true(Number.isInteger(body.timing.total_ms) && Number.isInteger(body.timing.upstream_ms));
    t.true(body.timing.total_ms >= body.timing.upstream_ms);
    t.regex(headers.get("x-service-upstream-trace-id") ?? "", /^req_img_/);
    t.is(openai.requests.length, 1);
    t.is(openai.requests[0]!.json.output_format, "webp");

    const rows = usageRows(gateway);
    t.is(rows.length, 1);
    t.is(rows[0]!.model, "openai/gpt-image-1");
    t.is(rows[0]!.requestId, body.id);
    t.is(rows[0]!.provider, "openai");
    t.is(rows[0]!.units.images, 1);
    t.true(rows[0]!.credits > 0);

    const files = (await (await fetch(`${gateway.url}/v1/storage/files`, { headers: { authorization: `Bearer ${keys.pro}` } })).json()) as {
      data: Array<{ id: string; contentType?: string }>;
    };
    t.true(files.data.some((file) => file.id === item.asset_id));
  });
});

test("formats: png and jpeg as asked, n pictures, size and aspect ratio honoured", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const png = await generate(gateway, keys.pro, { prompt: "x", output_format: "png", size: "1536x1024", n: 2 });
    t.is(png.status, 200, JSON.stringify(png.body));
    t.is(png.body.data.length, 2);
    for (const item of png.body.data) {
      t.is(item.media_type, "image/png");
      const meta = await decode(item.b64_json);
      t.is(meta.format, "png");
      t.is(meta.width, 1536);
      t.is(meta.height, 1024);
    }
    const jpeg = await generate(gateway, keys.pro, { prompt: "x", output_format: "jpeg", aspect_ratio: "2:3", output_compression: 50 });
    t.is(jpeg.status, 200, JSON.stringify(jpeg.body));
    const meta = await decode(jpeg.body.data[0]!.b64_json);
    t.is(meta.format, "jpeg");
    t.is(jpeg.body.data[0]!.media_type, "image/jpeg");
    t.is(meta.width, 1024);
    t.is(meta.height, 1536);
  });
});

test("transparent webp keeps alpha; dall-e-3 png converted to webp by the gateway with revised prompt", async (t) => {
  await withSetup(async ({ gateway, openai, keys }) => {
    const transparent = await generate(gateway, keys.pro, { prompt: "a logo", background: "transparent", output_format: "webp" });
    t.is(transparent.status, 200, JSON.stringify(transparent.body));
    const meta = await decode(transparent.body.data[0]!.b64_json);
    t.is(meta.format, "webp");
    t.true(meta.hasAlpha);

    openai.reset();
    const dalle = await generate(gateway, keys.pro, { prompt: "a lighthouse", model: "openai/dall-e-3", aspect_ratio: "16:9" });
    t.is(dalle.status, 200, JSON.stringify(dalle.body));
    t.is(dalle.body.model, "openai/dall-e-3");
    const item = dalle.body.data[0]!;
    t.is(item.media_type, "image/webp");
    const dalleMeta = await decode(item.b64_json);
    t.is(dalleMeta.format, "webp");
    t.is(dalleMeta.width, 1792);
    t.is(dalleMeta.height, 1024);
    t.not(item.revised_prompt, "");
    t.is(openai.requests[0]!.json.output_format, undefined);
  });
});

test("stability: diffusion knobs go upstream, picture decoded at the ratio's size", async (t) => {
  await withSetup(async ({ gateway, stability, keys }) => {
    const { status, headers, body } = await generate(gateway, keys.pro, {
      prompt: "a castle",
      model: "stability/core",
      aspect_ratio: "16:9",
      output_format: "png",
      negative_prompt: "fog",
      style_preset: "photographic",
      seed: 42,
    });
    t.is(status, 200, JSON.stringify(body));
    const meta = await decode(body.data[0]!.b64_json);
    t.is(meta.format, "png");
    t.true(meta.width! > meta.height!);
    t.truthy(headers.get("x-service-upstream-trace-id"));
    const form = stability.requests[0]!.form;
    t.deepEqual(form.fields.negative_prompt, ["fog"]);
    t.deepEqual(form.fields.style_preset, ["photographic"]);
    t.deepEqual(form.fields.seed, ["42"]);
  });
});

test("error rows: validation, edits pointer, allowlist, knobs naming the provider", async (t) => {
  await withSetup(async ({ gateway, openai, stability, keys }) => {
    const cases: Array<[Record<string, unknown>, number, string, string | undefined, RegExp?]> = [
      [{}, 400, "invalid_parameter", "prompt"],
      [{ prompt: "x", n: 0 }, 400, "invalid_parameter", "n"],
      [{ prompt: "x", aspect_ratio: "7:3" }, 400, "invalid_parameter", "aspect_ratio"],
      [{ prompt: "x", quality: "ultra" }, 400, "invalid_parameter", "quality"],
      [{ prompt: "x", response_format: "url" }, 400, "invalid_parameter", "response_format"],
      [{ prompt: "x", output_compression: 101, output_format: "webp" }, 400, "invalid_parameter", "output_compression"],
      [{ prompt: "x", output_compression: 50, output_format: "png" }, 400, "invalid_parameter", "output_compression"],
      [{ prompt: "x", background: "transparent", output_format: "jpeg" }, 400, "invalid_parameter", "background"],
      [{ prompt: "x", images: ["data:image/png;base64,AAAA"] }, 400, "invalid_parameter", "images", /\/v1\/image\/edits/],
      [{ prompt: "x", image_url: "https://example.com/a.png" }, 400, "invalid_parameter", "image_url", /\/v1\/image\/edits/],
      [{ prompt: "x", mask: "AAAA" }, 400, "invalid_parameter", "mask", /\/v1\/image\/edits/],
      [{ prompt: "x", model: "stability/ultra" }, 400, "model_not_allowed", "model"],
      [{ prompt: "x", model: "nobody/nothing" }, 400, "model_not_allowed", "model"],
      [{ prompt: "x", negative_prompt: "fog" }, 400, "invalid_parameter", "negative_prompt", /openai/],
      [{ prompt: "x", cfg_scale: 5 }, 400, "invalid_parameter", "cfg_scale", /openai/],
      [{ prompt: "x", style_preset: "anime" }, 400, "invalid_parameter", "style_preset", /openai/],
      [{ prompt: "x", model: "stability/core", cfg_scale: 5 }, 400, "invalid_parameter", "cfg_scale", /stability/],
      [{ prompt: "x", model: "stability/core", style_preset: "no-such-style" }, 400, "invalid_parameter", "style_preset"],
      [{ prompt: "x", size: "999x999" }, 400, "invalid_parameter", "size"],
      [{ prompt: "x", output_format: "svg" }, 400, "invalid_parameter", "output_format"],
    ];
    for (const [body, status, code, param, message] of cases) {
      const response = await generate(gateway, keys.pro, body);
      const label = JSON.stringify(body);
      t.is(response.status, status, label);
      t.is(response.body.error?.code, code, label);
      t.is(response.body.error?.type, "invalid_request_error", label);
      t.is(response.body.error?.param, param, label);
      if (message) t.regex(response.body.error!.message, message, label);
    }
    t.is(openai.requests.length, 0);
    t.is(stability.requests.length, 0);
    t.deepEqual(usageRows(gateway), []);
  });
});

test("plan caps: n and resolution over the cap are 403 plan_limit_exceeded naming plan and cap, nothing billed", async (t) => {
  await withSetup(async ({ gateway, openai, keys }) => {
    const n = await generate(gateway, keys.free, { prompt: "x", n: 2 });
    t.is(n.status, 403);
    t.is(n.body.error?.code, "plan_limit_exceeded");
    t.is(n.body.error?.param, "n");
    t.regex(n.body.error!.message, /free/);
    t.regex(n.body.error!.message, /1/);
    const pro = await generate(gateway, keys.pro, { prompt: "x", n: 5 });
    t.is(pro.status, 403);
    t.regex(pro.body.error!.message, /pro.*4/);
    t.is(openai.requests.length, 0);
    t.deepEqual(usageRows(gateway), []);
    t.deepEqual(usageRows(gateway), []);
  });
});

test("resolution cap: a 2K request on the free plan is refused", async (t) => {
  await withSetup(
    async ({ gateway, keys }) => {
      const free = await generate(gateway, keys.free, { prompt: "x", resolution: "2K" });
      t.is(free.status, 403);
      t.is(free.body.error?.code, "plan_limit_exceeded");
      t.is(free.body.error?.param, "resolution");
      t.regex(free.body.error!.message, /free.*1K/);
      const pro = await generate(gateway, keys.pro, { prompt: "x", resolution: "2K" });
      t.is(pro.status, 200, JSON.stringify(pro.body));
      const meta = await decode(pro.body.data[0]!.b64_json);
      t.is(meta.width, 1536);
    },
    (config) => {
      // A catalog whose gpt-image-1 claims a 2K tier (drawn by the fake at 1536x1024).
      config.catalog = {
        image: [
          {
            id: "openai/gpt-image-1",
            provider: "openai",
            model: "gpt-image-1",
            name: "GPT Image 1",
            operations: ["generate"],
            constraints: {
              aspectRatios: ["1:1", "3:2"],
              formats: ["png", "jpeg", "webp"],
              resolutions: { "1K": { "1:1": "1024x1024" }, "2K": { "1:1": "1536x1024" } },
              defaultResolution: "1K",
              features: { transparency: true, explicitSize: true, outputCompression: true },
            },
            pricing: { perImage: 1000 },
          },
        ],
      };
      config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    },
  );
});

test("refusal: 200 with empty data and refusal, billed", async (t) => {
  await withSetup(async ({ gateway, openai, keys }) => {
    openai.set({ refusal: true });
    const { status, body } = await generate(gateway, keys.pro, { prompt: "something forbidden" });
    t.is(status, 200, JSON.stringify(body));
    t.deepEqual(body.data, []);
    t.is(typeof body.refusal, "string");
    t.true(body.refusal!.length > 0);
    const rows = usageRows(gateway);
    t.is(rows.length, 1);
    t.true(rows[0]!.credits > 0);
  });
});

test("402 when credits are short, before any upstream call", async (t) => {
  await withSetup(
    async ({ gateway, openai, keys }) => {
      const { status, body } = await generate(gateway, keys.pro, { prompt: "x" });
      t.is(status, 402);
      t.is(body.error?.code, "insufficient_credits");
      t.is(openai.requests.length, 0);
    },
    (config) => {
      config.plans = { ...config.plans, pro: { ...(config.plans?.pro ?? {}), monthlyCredits: 10 } };
    },
  );
});

test("an upstream error about an accepted value is returned verbatim, nothing billed", async (t) => {
  await withSetup(async ({ gateway, openai, keys }) => {
    openai.set({ status: 400, errorBody: { error: { message: "prompt too spicy", type: "invalid_request_error", param: "prompt", code: "bad_prompt" } } });
    const { status, body } = await generate(gateway, keys.pro, { prompt: "x" });
    t.is(status, 400);
    t.is(body.error?.message, "prompt too spicy");
    t.deepEqual(usageRows(gateway), []);
  });
});

test("an image upstream that fails: 502 naming the cause, each failed attempt logged with the request id, nothing billed", async (t) => {
  await withSetup(async ({ gateway, openai, keys }) => {
    openai.set({ status: 503 });
    const { status, headers, body } = await generate(gateway, keys.pro, { prompt: "x" });
    t.is(status, 502);
    t.regex(body.error?.message ?? "", /openai: HTTP 503/);
    const requestId = headers.get("x-request-id")!;
    t.true(quietLogger.lines.some((line) => line.includes(requestId) && /upstream attempt failed: provider openai: HTTP 503/.test(line)));
    t.deepEqual(usageRows(gateway), []);
  });
});

test("storage full: the picture is still returned, without asset_id, with X-Service-Asset-Warning", async (t) => {
  await withSetup(
    async ({ gateway, keys }) => {
      const { status, headers, body } = await generate(gateway, keys.pro, { prompt: "x", output_format: "png" });
      t.is(status, 200, JSON.stringify(body));
      t.is(body.data.length, 1);
      t.is(body.data[0]!.asset_id, undefined);
      t.is((await decode(body.data[0]!.b64_json)).format, "png");
      t.truthy(headers.get("x-service-asset-warning"));
      t.is(usageRows(gateway).length, 1);
    },
    (config) => {
      config.plans = { ...config.plans, pro: { ...(config.plans?.pro ?? {}), storageBytes: 10 } };
    },
  );
});

test("no image provider configured: 503 provider_not_configured", async (t) => {
  const home = await makeHome();
  const key = await addKey(home, "agent", "pro");
  const gateway = await startTestGateway(home);
  try {
    const { status, body } = await generate(gateway, key, { prompt: "x" });
    t.is(status, 503);
    t.is(body.error?.code, "provider_not_configured");
  } finally {
    await gateway.shutdown();
  }
});
