// One conformance suite every image provider passes: each type from the registry, with the real
// UpstreamHttp, against its fake vendor. What differs per vendor (how to make the fake refuse or
// fail, a model id) is in the `vendors` table; adding an image vendor adds a row here.

import test from "ava";
import { upstreamSchema } from "../src/config/config-schema.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import { sniffImageMediaType } from "../src/providers/image-bytes.js";
import type { ImageCapability } from "../src/providers/image-types.js";
import { UpstreamHttpError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { startFakeOpenAIImages } from "./fakes/openai-images.js";
import { startFakeStability } from "./fakes/stability.js";
import { providerHooks } from "./helpers/provider-hooks.js";

interface VendorFake {
  baseUrl: string;
  requestCount(): number;
  refuse(): void;
  fail(status: number, retryAfterSeconds?: string): void;
  close(): Promise<void>;
}

interface Vendor {
  type: string;
  model: string;
  start(): Promise<VendorFake>;
}

const vendors: Vendor[] = [
  {
    type: "openai",
    model: "gpt-image-1",
    async start() {
      const fake = await startFakeOpenAIImages();
      return {
        baseUrl: fake.url,
        requestCount: () => fake.requests.length,
        refuse: () => fake.enqueue({ refusal: true }),
        fail: (status, retryAfter) => fake.enqueue(retryAfter === undefined ? { status } : { status, retryAfter }),
        close: () => fake.close(),
      };
    },
  },
  {
    type: "stability",
    model: "core",
    async start() {
      const fake = await startFakeStability();
      return {
        baseUrl: fake.url,
        requestCount: () => fake.requests.length,
        refuse: () => fake.enqueue({ moderation: true }),
        fail: (status, retryAfter) => fake.enqueue(retryAfter === undefined ? { status } : { status, retryAfter }),
        close: () => fake.close(),
      };
    },
  },
];

const http = new UpstreamHttp();
const settings = { ...upstreamSchema.parse({}), retries: 0 };
const options = () => ({ signal: new AbortController().signal });

test.after.always(() => http.close());

async function withVendor(vendor: Vendor, run: (images: ImageCapability, fake: VendorFake) => Promise<void>): Promise<void> {
  const fake = await vendor.start();
  try {
    const provider = providerTypes
      .get(vendor.type)!
      .create({ name: vendor.type, config: { type: vendor.type, baseUrl: fake.baseUrl, apiKey: "test-key" }, upstream: settings, http, ...providerHooks });
    await run(provider.images!, fake);
  } finally {
    await fake.close();
  }
}

for (const vendor of vendors) {
  test(`${vendor.type}: n pictures in the asked format, with the vendor's request id`, async (t) => {
    await withVendor(vendor, async (images) => {
      for (const format of ["png", "jpeg", "webp"] as const) {
        const result = await images.generate!({ model: vendor.model, prompt: "a lighthouse", n: 2, aspectRatio: "1:1", outputFormat: format }, options());
        t.is(result.images.length, 2);
        for (const image of result.images) {
          t.is(image.mediaType, `image/${format}`);
          t.is(sniffImageMediaType(image.bytes), `image/${format}`);
        }
        t.truthy(result.upstreamRequestId);
        t.is(result.refusal, undefined);
      }
    });
  });

  test(`${vendor.type}: a moderation refusal is an empty result with the vendor's reason`, async (t) => {
    await withVendor(vendor, async (images, fake) => {
      fake.refuse();
      const result = await images.generate!({ model: vendor.model, prompt: "x", n: 1 }, options());
      t.deepEqual(result.images, []);
      t.true(typeof result.refusal === "string" && result.refusal.length > 0);
    });
  });

  test(`${vendor.type}: errors carry the OpenAI envelope, the vendor's body and Retry-After`, async (t) => {
    await withVendor(vendor, async (images, fake) => {
      for (const [status, retryAfter] of [[400], [401], [429, "4"], [500], [503]] as Array<[number, string?]>) {
        fake.fail(status, retryAfter);
        const error = await t.throwsAsync(images.generate!({ model: vendor.model, prompt: "x", n: 1 }, options()), { instanceOf: UpstreamHttpError });
        t.is(error.status, status);
        t.is(error.contentType, "application/json");
        const body = JSON.parse(error.body);
        t.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
        t.true(typeof body.error.message === "string" && body.error.message.length > 0);
        t.truthy(error.vendorBody);
        if (retryAfter) t.is(error.retryAfterMs, Number(retryAfter) * 1000);
      }
    });
  });

  test(`${vendor.type}: an aborted call rejects`, async (t) => {
    await withVendor(vendor, async (images) => {
      const controller = new AbortController();
      controller.abort(new Error("gone"));
      await t.throwsAsync(images.generate!({ model: vendor.model, prompt: "x", n: 1 }, { signal: controller.signal }));
    });
  });
}
