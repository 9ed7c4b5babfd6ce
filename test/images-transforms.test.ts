// POST /v1/image/upscale and /v1/image/background-removal end to end: the local engines on real
// pixels, Stability's upscaler and remover through its fake, no default model (503 until an
// operator enables one with `gw tools enable`, picked up without a restart), scale and format
// rules, allowlists, library inputs and lineage, SSRF refusals, storage and usage rows.
import { promises as fs } from "node:fs";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { DEFAULT_IMAGE_MODEL_INPUTS } from "../src/config/default-image-models.js";
import { homePaths } from "../src/config/paths.js";
import type { FileRecord } from "../src/store/file-records.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { field } from "./fakes/multipart-form.js";
import { type FakeStability, startFakeStability } from "./fakes/stability.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, gw, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

interface Setup {
  gateway: TestGateway;
  stability: FakeStability;
  hosts: PictureHosts;
  keys: { a: string; b: string };
}

const ALL_ENABLED = (config: RawConfig) => {
  config.tools.upscale = { default: "local/lanczos", allow: ["stability/fast-upscale", "stability/conservative-upscale"] };
  config.tools.background = { default: "local/flat-background", allow: ["stability/remove-background"] };
};

async function withSetup(run: (setup: Setup) => Promise<void>, edit: (config: RawConfig) => void = ALL_ENABLED): Promise<void> {
  const stability = await startFakeStability();
  const hosts = await startPictureHosts();
  const home = await makeHome((config) => {
    config.providers = {
      local: { type: "local" },
      stability: { type: "stability", baseUrl: stability.url, apiKey: "test-key", upstream: { retries: 0 } },
    };
    edit(config);
  });
  const keys = { a: await addKey(home, "agent-a", "pro"), b: await addKey(home, "agent-b", "pro") };
  const gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  try {
    await run({ gateway, stability, hosts, keys });
  } finally {
    await gateway.shutdown();
    await stability.close();
    await hosts.close();
  }
}

interface ResultBody {
  id: string;
  created: number;
  model: string;
  data: Array<{ b64_json: string; media_type: string; asset_id?: string; revised_prompt?: string }>;
  refusal?: string;
  timing: { total_ms: number; upstream_ms: number };
  error?: { message: string; type: string; code: string; param?: string; provider?: string };
}

type Endpoint = "upscale" | "background-removal";

async function call(
  gateway: TestGateway,
  key: string,
  endpoint: Endpoint,
  body: Record<string, unknown>,
): Promise<{ status: number; headers: Headers; body: ResultBody }> {
  const response = await fetch(`${gateway.url}/v1/image/${endpoint}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ResultBody };
}

async function pngDataUrl(width: number, height: number, colour = "#3366cc"): Promise<string> {
  const bytes = await sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();
  return `data:image/png;base64,${bytes.toString("base64")}`;
}

async function discOnWhite(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="160"><rect width="100%" height="100%" fill="#ffffff"/><circle cx="120" cy="80" r="50" fill="#2060c0"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

async function picture(item: ResultBody["data"][number]): Promise<{ format?: string; width?: number; height?: number; hasAlpha?: boolean; bytes: Buffer }> {
  const bytes = Buffer.from(item.b64_json, "base64");
  const meta = await sharp(bytes).metadata();
  return { format: meta.format, width: meta.width, height: meta.height, hasAlpha: meta.hasAlpha, bytes };
}

function usageRows(gateway: TestGateway, endpoint: string): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === endpoint);
}

/** The stored-file record of an asset, as the server wrote it. */
async function storedRecord(gateway: TestGateway, assetId: string): Promise<FileRecord | undefined> {
  const records = path.join(homePaths(gateway.home).dataDir, "storage", "records");
  for (const agent of await fs.readdir(records)) {
    const text = await fs.readFile(path.join(records, agent, `${assetId}.json`), "utf8").catch(() => undefined);
    if (text !== undefined) return JSON.parse(text) as FileRecord;
  }
  return undefined;
}

async function defaultProjectId(gateway: TestGateway, key: string): Promise<string> {
  const response = await fetch(`${gateway.url}/v1/projects`, { headers: { authorization: `Bearer ${key}` } });
  const projects = (await response.json()) as { data: Array<{ project_id: string; isDefault: boolean }> };
  return projects.data.find((project) => project.isDefault)!.project_id;
}

async function publicModelIds(gateway: TestGateway): Promise<string[]> {
  const catalog = (await (await fetch(`${gateway.url}/v1/public/image-models`)).json()) as { models: Array<{ id: string }> };
  return catalog.models.map((model) => model.id);
}

test("no default model: 503 provider_not_configured until `gw tools enable`, then 200 without a restart", async (t) => {
  await withSetup(
    async ({ gateway, keys }) => {
      const image = await pngDataUrl(30, 20);
      for (const endpoint of ["upscale", "background-removal"] as const) {
        const refused = await call(gateway, keys.a, endpoint, { image });
        t.is(refused.status, 503);
        t.is(refused.body.error?.code, "provider_not_configured");
        t.regex(refused.body.error!.message, /gw tools enable/);
      }
      t.false((await publicModelIds(gateway)).includes("local/lanczos"));
      t.deepEqual(usageRows(gateway, "image.upscale"), []);

      const enabled = await gw(["tools", "enable", "upscale", "local/lanczos", "--home", gateway.home]);
      t.is(enabled.code, 0, enabled.stderr);
      const answer = await eventually(() => call(gateway, keys.a, "upscale", { image }), {
        until: (upscaled) => upscaled.status !== 503,
        what: "the running server to take up the enabled tool",
        intervalMs: 100,
      });
      t.is(answer.status, 200, JSON.stringify(answer.body));
      t.is(answer.body.model, "local/lanczos");
      t.deepEqual(await publicModelIds(gateway), ["local/lanczos"]);
      // Background removal is a tool of its own: still not configured.
      t.is((await call(gateway, keys.a, "background-removal", { image })).status, 503);
    },
    () => undefined,
  );
});

test("local/lanczos: exactly 2x and 4x a non-square picture, png or webp as asked, stored and billed at zero", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const image = await pngDataUrl(30, 20);
    for (const [scale, format] of [
      [2, "png"],
      [4, "webp"],
    ] as const) {
      const { status, headers, body } = await call(gateway, keys.a, "upscale", { image, scale, output_format: format });
      t.is(status, 200, JSON.stringify(body));
      t.is(body.id, headers.get("x-request-id") ?? "");
      t.is(body.model, "local/lanczos");
      t.is(typeof body.created, "number");
      t.true(Number.isInteger(body.timing.total_ms) && Number.isInteger(body.timing.upstream_ms));
      t.is(body.data.length, 1);
      t.is(body.data[0]!.media_type, `image/${format}`);
      t.is(body.data[0]!.revised_prompt, undefined);
      const result = await picture(body.data[0]!);
      t.deepEqual([result.format, result.width, result.height], [format, 30 * scale, 20 * scale]);
      t.truthy(body.data[0]!.asset_id);
    }
    // Omitted: the engine's own factor (2) and the spec's default format (webp).
    const plain = await call(gateway, keys.a, "upscale", { image });
    t.is(plain.status, 200, JSON.stringify(plain.body));
    const result = await picture(plain.body.data[0]!);
    t.deepEqual([plain.body.data[0]!.media_type, result.format, result.width, result.height], ["image/webp", "webp", 60, 40]);

    const rows = usageRows(gateway, "image.upscale");
    t.is(rows.length, 3);
    for (const row of rows) {
      t.is(row.model, "local/lanczos");
      t.is(row.provider, "local");
      t.deepEqual(row.units, { images: 1 });
      t.is(row.credits, 0);
    }
    t.is(rows[2]!.requestId, plain.body.id);

    const record = await storedRecord(gateway, plain.body.data[0]!.asset_id!);
    t.is(record?.contentType, "image/webp");
    t.deepEqual(record?.image, { projectId: await defaultProjectId(gateway, keys.a), model: "local/lanczos", prompt: "upscale" });
  });
});

test("scale: an unoffered factor is refused naming the offered ones, never rounded; formats are png or webp", async (t) => {
  await withSetup(async ({ gateway, stability, keys }) => {
    const image = await pngDataUrl(40, 40);
    const cases: Array<[Endpoint, Record<string, unknown>, string, RegExp?]> = [
      ["upscale", { image, scale: 3 }, "scale", /2 or 4/],
      ["upscale", { image, scale: 2.5 }, "scale"],
      ["upscale", { image, scale: "2" }, "scale"],
      ["upscale", { image, model: "stability/fast-upscale", scale: 2 }, "scale", /by 4/],
      ["upscale", { image, model: "stability/conservative-upscale", scale: 4 }, "scale", /takes no 'scale'/],
      ["upscale", { image, output_format: "jpeg" }, "output_format"],
      ["background-removal", { image, output_format: "jpeg" }, "output_format", /png or webp/],
      ["background-removal", { image, scale: 2 }, "scale"],
      ["upscale", {}, "image"],
      ["background-removal", { model: "local/flat-background" }, "image"],
    ];
    for (const [endpoint, body, param, message] of cases) {
      const { status, body: answer } = await call(gateway, keys.a, endpoint, body);
      t.is(status, 400, `${endpoint} ${JSON.stringify({ ...body, image: undefined })}: ${JSON.stringify(answer)}`);
      t.is(answer.error?.type, "invalid_request_error");
      t.is(answer.error?.param, param);
      if (message) t.regex(answer.error!.message, message);
    }
    t.is(stability.requests.length, 0);
    t.deepEqual(usageRows(gateway, "image.upscale"), []);
  });
});

test("model not allowlisted for the tool: 400 model_not_allowed", async (t) => {
  await withSetup(
    async ({ gateway, keys }) => {
      const image = await pngDataUrl(40, 40);
      for (const [endpoint, model] of [
        ["upscale", "stability/fast-upscale"],
        ["background-removal", "local/lanczos"],
        ["upscale", "nope/model"],
      ] as const) {
        const { status, body } = await call(gateway, keys.a, endpoint, { image, model });
        t.is(status, 400, JSON.stringify(body));
        t.is(body.error?.code, "model_not_allowed");
        t.is(body.error?.param, "model");
      }
    },
    (config) => {
      config.tools.upscale = { default: "local/lanczos", allow: [] };
      config.tools.background = { default: "local/flat-background", allow: [] };
    },
  );
});

test("local/flat-background: transparent corners, opaque subject, png or webp with alpha, its own usage row", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const image = `data:image/png;base64,${(await discOnWhite()).toString("base64")}`;
    for (const format of ["png", "webp"] as const) {
      const { status, body } = await call(gateway, keys.a, "background-removal", { image, output_format: format });
      t.is(status, 200, JSON.stringify(body));
      t.is(body.model, "local/flat-background");
      const result = await picture(body.data[0]!);
      t.deepEqual([result.format, result.width, result.height, result.hasAlpha], [format, 240, 160, true]);
      const { data, info } = await sharp(result.bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
      for (const [x, y] of [
        [0, 0],
        [239, 0],
        [0, 159],
        [239, 159],
      ] as const)
        t.is(alpha(x, y), 0);
      t.is(alpha(120, 80), 255);
    }
    const rows = usageRows(gateway, "image.background-removal");
    t.is(rows.length, 2);
    t.deepEqual(rows[0]!.units, { images: 1 });
    t.is(rows[0]!.credits, 0);

    // A picture with no flat background is refused (400 naming the provider), not mangled.
    const noise = await sharp(Buffer.from(Array.from({ length: 64 * 48 * 3 }, (_, index) => (index * 7919) % 251)), {
      raw: { width: 64, height: 48, channels: 3 },
    })
      .png()
      .toBuffer();
    const refused = await call(gateway, keys.a, "background-removal", { image: noise.toString("base64") });
    t.is(refused.status, 400);
    t.is(refused.body.error?.param, "image");
    t.is(refused.body.error?.provider, "local");
    t.is(usageRows(gateway, "image.background-removal").length, 2);
  });
});

test("parent_asset_id: a library picture as the input and the lineage; another agent's is 404", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const first = await call(gateway, keys.a, "upscale", { image: await pngDataUrl(16, 12), output_format: "png" });
    t.is(first.status, 200, JSON.stringify(first.body));
    const parent = first.body.data[0]!.asset_id!;

    // No image: the parent is read from the caller's storage and is the result's parent.
    const again = await call(gateway, keys.a, "upscale", { parent_asset_id: parent, scale: 4, output_format: "png" });
    t.is(again.status, 200, JSON.stringify(again.body));
    const result = await picture(again.body.data[0]!);
    t.deepEqual([result.width, result.height], [32 * 4, 24 * 4]);
    const record = await storedRecord(gateway, again.body.data[0]!.asset_id!);
    t.deepEqual(record?.image, { projectId: await defaultProjectId(gateway, keys.a), parentAssetId: parent, model: "local/lanczos", prompt: "upscale x4" });

    // With an image, parent_asset_id is the lineage only.
    const withImage = await call(gateway, keys.a, "upscale", { image: await pngDataUrl(10, 10), parent_asset_id: parent, output_format: "png" });
    t.is(withImage.status, 200);
    t.is((await picture(withImage.body.data[0]!)).width, 20);
    t.is((await storedRecord(gateway, withImage.body.data[0]!.asset_id!))?.image?.parentAssetId, parent);

    for (const body of [{ parent_asset_id: parent }, { image: await pngDataUrl(10, 10), parent_asset_id: parent }, { parent_asset_id: "file_missing" }]) {
      const foreign = await call(gateway, body.parent_asset_id === parent ? keys.b : keys.a, "background-removal", body);
      t.is(foreign.status, 404, JSON.stringify(foreign.body));
      t.is(foreign.body.error?.code, "asset_not_found");
      t.is(foreign.body.error?.param, "parent_asset_id");
    }
    t.deepEqual(usageRows(gateway, "image.background-removal"), []);
  });
});

test("image URLs: downloaded from a public host; private and internal addresses refused with url_not_allowed", async (t) => {
  await withSetup(async ({ gateway, hosts, keys }) => {
    hosts.serve("/disc.png", await discOnWhite(), "image/png");
    const fetched = await call(gateway, keys.a, "background-removal", { image: `${hosts.publicBase}/disc.png`, output_format: "png" });
    t.is(fetched.status, 200, JSON.stringify(fetched.body));
    t.deepEqual(hosts.publicHits, ["/disc.png"]);

    hosts.redirect("/hop.png", `http://127.0.0.1:${hosts.internal.port}/secret.png`);
    for (const image of [
      `http://intranet.test:${hosts.internal.port}/x.png`,
      `http://metadata.test:${hosts.internal.port}/latest`,
      `${hosts.publicBase}/hop.png`,
    ]) {
      for (const endpoint of ["upscale", "background-removal"] as const) {
        const { status, body } = await call(gateway, keys.a, endpoint, { image });
        t.is(status, 400, JSON.stringify(body));
        t.is(body.error?.code, "url_not_allowed");
        t.is(body.error?.param, "image");
      }
    }
    t.is(hosts.internal.requests.length, 0);
    t.is(hosts.internal.connections, 0);
    t.deepEqual(usageRows(gateway, "image.upscale"), []);
  });
});

test("Stability's fast upscaler and remover through the fake: the vendor's wire format, billed at the catalog price", async (t) => {
  await withSetup(async ({ gateway, stability, keys }) => {
    const image = await pngDataUrl(64, 48);
    const up = await call(gateway, keys.a, "upscale", { image, model: "stability/fast-upscale", scale: 4, output_format: "png" });
    t.is(up.status, 200, JSON.stringify(up.body));
    t.is(up.body.model, "stability/fast-upscale");
    t.regex(up.headers.get("x-service-upstream-trace-id") ?? "", /^stab_req_/);
    const upscaled = await picture(up.body.data[0]!);
    t.deepEqual([upscaled.format, upscaled.width, upscaled.height], ["png", 256, 192]);
    const sent = stability.requests.at(-1)!;
    t.is(sent.path, "/v2beta/stable-image/upscale/fast");
    t.is(field(sent.form, "output_format"), "png");
    t.is(sent.form.files[0]?.field, "image");

    const removed = await call(gateway, keys.a, "background-removal", { image, model: "stability/remove-background" });
    t.is(removed.status, 200, JSON.stringify(removed.body));
    t.is(removed.body.data[0]!.media_type, "image/webp");
    const cutout = await picture(removed.body.data[0]!);
    t.deepEqual([cutout.format, cutout.width, cutout.height, cutout.hasAlpha], ["webp", 64, 48, true]);
    t.is(stability.requests.at(-1)!.path, "/v2beta/stable-image/edit/remove-background");
    t.is(field(stability.requests.at(-1)!.form, "output_format"), "webp");

    t.deepEqual(
      usageRows(gateway, "image.upscale").map((row) => [row.model, row.provider, row.credits, row.units.images]),
      [["stability/fast-upscale", "stability", 20_000, 1]],
    );
    t.deepEqual(
      usageRows(gateway, "image.background-removal").map((row) => [row.model, row.credits]),
      [["stability/remove-background", 50_000]],
    );

    // Stability takes PNG, JPEG and WebP: a GIF goes as a PNG of its first frame.
    const gif = await sharp({ create: { width: 40, height: 40, channels: 3, background: "#336699" } })
      .gif()
      .toBuffer();
    const fromGif = await call(gateway, keys.a, "upscale", { image: `data:image/gif;base64,${gif.toString("base64")}`, model: "stability/fast-upscale" });
    t.is(fromGif.status, 200, JSON.stringify(fromGif.body));
    t.is(stability.requests.at(-1)!.form.files[0]!.contentType, "image/png");
    t.deepEqual([(await picture(fromGif.body.data[0]!)).width], [160]);
  });
});

test("a format the model does not produce is converted with sharp (never asked of the vendor)", async (t) => {
  await withSetup(
    async ({ gateway, stability, keys }) => {
      const { status, body } = await call(gateway, keys.a, "background-removal", {
        image: await pngDataUrl(64, 48),
        model: "stability/remove-background",
        output_format: "webp",
      });
      t.is(status, 200, JSON.stringify(body));
      t.is(field(stability.requests.at(-1)!.form, "output_format"), undefined);
      t.is(body.data[0]!.media_type, "image/webp");
      const result = await picture(body.data[0]!);
      t.deepEqual([result.format, result.hasAlpha], ["webp", true]);
    },
    (config) => {
      config.catalog = {
        image: DEFAULT_IMAGE_MODEL_INPUTS.map((model) =>
          model.id === "stability/remove-background" ? { ...model, constraints: { transformFormats: ["png"] } } : model,
        ),
      };
      ALL_ENABLED(config);
    },
  );
});

test("402 when credits are short, before any upstream call; an upstream refusal of a value is passed through unbilled", async (t) => {
  await withSetup(
    async ({ gateway, stability, keys }) => {
      const image = await pngDataUrl(64, 48);
      const short = await call(gateway, keys.a, "background-removal", { image, model: "stability/remove-background" });
      t.is(short.status, 402);
      t.is(short.body.error?.code, "insufficient_credits");
      t.is(stability.requests.length, 0);
      // The local engines are free, so they still work.
      t.is((await call(gateway, keys.a, "background-removal", { image: `data:image/png;base64,${(await discOnWhite()).toString("base64")}` })).status, 200);
    },
    (config) => {
      ALL_ENABLED(config);
      config.plans = { ...config.plans, pro: { ...(config.plans?.pro ?? {}), monthlyCredits: 10 } };
    },
  );
  await withSetup(async ({ gateway, stability, keys }) => {
    // 31 x 31 is below the fast upscaler's 32-pixel minimum: Stability answers 400 bad_request.
    const { status, body } = await call(gateway, keys.a, "upscale", { image: await pngDataUrl(31, 31), model: "stability/fast-upscale" });
    t.is(status, 400, JSON.stringify(body));
    t.is(stability.requests.length, 1);
    t.deepEqual(usageRows(gateway, "image.upscale"), []);
  });
});
