// The config file's schema: validated at load and on every reload. Defaults here are the
// embedded defaults; config/default.json is what `gw init` writes and config/schema.json is
// generated from this file (scripts/write-config-schema.mjs).
import { z } from "zod";
import { isAddressOrRange } from "./address-ranges.js";
import { catalogSchema } from "./catalog-schema.js";

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

export const serverSchema = z
  .object({
    host: z.string().min(1).default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(8787),
    publicUrl: z.string().url().nullable().default(null),
    /** Largest accepted JSON body in bytes (docs/decisions.md §2: 25 MB). */
    maxJsonBodyBytes: positiveInt.default(25 * 1024 * 1024),
    /** How long SIGTERM waits for in-flight requests and streams before closing them. */
    drainTimeoutMs: nonNegativeInt.default(30_000),
    /**
     * A request's headers and body must have arrived this long after it began, else 408 and the
     * connection is closed (Node's requestTimeout; docs/decisions.md §2). Answering takes as long
     * as it takes. Read at start.
     */
    bodyTimeoutMs: positiveInt.default(300_000),
    /**
     * Bearer token that lets a client other than loopback read GET /metrics (loopback needs
     * none). Unset or "" (an unset "${NAME}"): metrics are served on loopback only.
     */
    metricsToken: z
      .string()
      .refine((token) => token === "" || token.length >= 16, "use at least 16 characters")
      .optional(),
  })
  .strict();

const MB = 1024 * 1024;

/**
 * The most gw reads of one upstream answer, by what the answer is (docs/decisions.md §4): an
 * answer passing its cap ends the call, read no further. Sized for the largest real answers.
 */
export const answerCapsSchema = z
  .object({
    /** Chat completions and messages, streamed or not: 128k output tokens are about 0.5 MB; logprobs, several choices and pictures fit. */
    chat: positiveInt.default(32 * MB),
    /** 2048 inputs of 3072 dimensions as JSON floats (up to about 30 bytes a number) are about 200 MB. */
    embeddings: positiveInt.default(256 * MB),
    /** Pictures, often base64: a 4K PNG is up to about 33 MB so, ten 1536x1024 pictures about 40 MB. */
    images: positiveInt.default(128 * MB),
    /** Speech and transcripts: 40,000 characters of ElevenLabs speech as 44.1 kHz WAV are about 240 MB; transcripts are far smaller. */
    audio: positiveInt.default(256 * MB),
    /** Web search: twenty results are tens of KB. */
    search: positiveInt.default(8 * MB),
    /** Video API answers (jobs' states); a finished clip's download is bounded by video.maxClipBytes instead. */
    video: positiveInt.default(4 * MB),
    /** An error answer's body (any status but 2xx): past it the status stays and gw's own message replaces the body. */
    error: positiveInt.default(1 * MB),
  })
  .strict();

export const upstreamSchema = z
  .object({
    connectTimeoutMs: positiveInt.default(10_000),
    firstByteTimeoutMs: positiveInt.default(120_000),
    idleTimeoutMs: positiveInt.default(120_000),
    /** Retries on the same upstream before falling back to the next route. */
    retries: nonNegativeInt.max(10).default(2),
    retryBaseDelayMs: nonNegativeInt.default(250),
    /** A Retry-After longer than this is not waited for: the next route is tried instead. */
    maxRetryAfterMs: nonNegativeInt.default(10_000),
    connectionsPerOrigin: positiveInt.default(256),
    /**
     * A request's whole upstream time: all its attempts (retries and fallbacks) and the answer's
     * last byte, streamed or not. An answer still arriving then is cut (504, or a stream ended as a broken one).
     */
    totalTimeoutMs: positiveInt.default(300_000),
    /** Consecutive failed attempts after which a provider is skipped for a cool-down (its circuit opens); 0: never. */
    breakerFailureThreshold: nonNegativeInt.default(5),
    /** How long an open circuit skips the provider before one probe request is let through. */
    breakerCooldownMs: positiveInt.default(30_000),
    maxAnswerBytes: answerCapsSchema.default(answerCapsSchema.parse({})),
  })
  .strict();

/**
 * A provider's `upstream`: only the settings it changes. Not `upstreamSchema.partial()`, whose
 * fields keep their defaults: `{"firstByteTimeoutMs": 400}` would come out with every other
 * setting at its embedded default, overriding the global `upstream` section.
 */
const upstreamOverrideSchema = z
  .object({
    ...Object.fromEntries(Object.entries(upstreamSchema.shape).map(([name, field]) => [name, field.unwrap().optional()])),
    // Cap by cap, likewise: `{"chat": 1048576}` changes the chat cap only.
    maxAnswerBytes: z
      .object(Object.fromEntries(Object.entries(answerCapsSchema.shape).map(([name, field]) => [name, field.unwrap().optional()])))
      .strict()
      .optional(),
  })
  .strict() as unknown as z.ZodType<UpstreamOverride>;

export const providerSchema = z
  .object({
    type: z.string().min(1),
    baseUrl: z.string().url().optional(),
    apiKey: z.string().optional(),
    /** Extra headers sent on every upstream call (e.g. OpenRouter attribution). */
    headers: z.record(z.string(), z.string()).optional(),
    upstream: upstreamOverrideSchema.optional(),
    /** max_tokens sent when a request names none, for vendors that require one (anthropic). */
    defaultMaxTokens: positiveInt.optional(),
    /**
     * The field an OpenAI-compatible upstream reads for the output limit gw fills in. Default:
     * max_completion_tokens for api.openai.com (its reasoning models refuse max_tokens), max_tokens
     * elsewhere (what every compatible server reads).
     */
    maxTokensField: z.enum(["max_tokens", "max_completion_tokens"]).optional(),
    /**
     * `openai` providers only: the upstream speaks OpenAI's Responses API, and POST /v1/responses
     * is passed through to it rather than converted to chat (docs/decisions.md §19).
     */
    responsesApi: z.boolean().optional(),
  })
  .strict();

const routeUpstreamSchema = z
  .object({
    provider: z.string().min(1),
    model: z.string().min(1),
    weight: z.number().positive().default(1),
  })
  .strict();

const routeFields = z
  .object({
    prefix: z.string().min(1),
    provider: z.string().min(1).optional(),
    /** When set, the upstream receives this model instead of the request's model minus the prefix. */
    model: z.string().min(1).optional(),
    priority: z.number().int().default(0),
    freeTier: z.boolean().default(false),
    upstreams: z.array(routeUpstreamSchema).min(1).optional(),
  })
  .strict();

type RouteFields = z.output<typeof routeFields>;
/** A route to one provider (`openai/` -> openai). */
export type ProviderRoute = Omit<RouteFields, "provider" | "upstreams"> & { provider: string; upstreams?: undefined };
/** A route among weighted upstreams (`auto`). */
export type UpstreamsRoute = Omit<RouteFields, "provider" | "upstreams"> & { upstreams: RouteUpstream[]; provider?: undefined };
export type RouteUpstream = z.output<typeof routeUpstreamSchema>;

export function isProviderRoute(route: RouteFields): route is ProviderRoute {
  return route.provider !== undefined && route.upstreams === undefined;
}

export function isUpstreamsRoute(route: RouteFields): route is UpstreamsRoute {
  return route.upstreams !== undefined && route.provider === undefined;
}

// One object schema, so config/schema.json shows one route with every field (a transform would drop
// the routes' default there); the refinement lets through only the two kinds the type names.
export const routeSchema = routeFields.refine((route) => isProviderRoute(route) || isUpstreamsRoute(route), {
  message: "a route names either `provider` or `upstreams`, not both and not neither",
}) as unknown as z.ZodType<ProviderRoute | UpstreamsRoute, z.input<typeof routeFields>>;

export const pricingSchema = z
  .object({
    /** USD per million input tokens. */
    input_per_mtok: z.number().nonnegative(),
    /** USD per million output tokens. */
    output_per_mtok: z.number().nonnegative(),
    /** USD per million input tokens read from the vendor's prompt cache (default: the input price). */
    cache_read_per_mtok: z.number().nonnegative().optional(),
    /** USD per million input tokens written to the vendor's prompt cache (default: the input price). */
    cache_write_per_mtok: z.number().nonnegative().optional(),
  })
  .strict();

const modality = z.enum(["text", "image", "file", "audio", "video"]);

export const modelSchema = z
  .object({
    id: z.string().min(1),
    name: z.string().min(1),
    context_length: positiveInt,
    input_modalities: z.array(modality).min(1).default(["text"]),
    output_modalities: z.array(modality).min(1).default(["text"]),
    created: nonNegativeInt.optional(),
    /** The most tokens the model writes in one answer: the max_tokens gw fills in for a request that names none. */
    max_output_tokens: positiveInt.optional(),
    pricing: pricingSchema.optional(),
  })
  .strict();

const toolSchema = z.object({ default: z.string().nullable().default(null), allow: z.array(z.string()).default([]) }).strict();

const resolution = z.enum(["512", "1K", "2K", "4K"]);

const planSchema = z
  .object({
    monthlyCredits: nonNegativeInt.optional(),
    /** Free-tier plans reach only routes flagged `freeTier`. */
    freeTierOnly: z.boolean().optional(),
    requestsPerMinute: positiveInt.optional(),
    imageMaxN: positiveInt.optional(),
    imageMaxResolution: resolution.optional(),
    storageBytes: nonNegativeInt.optional(),
    storageOperationsPerPeriod: nonNegativeInt.optional(),
    /** Max: among eligible upstreams, prefer the one with the lowest recent latency. */
    lowLatencyRouting: z.boolean().optional(),
  })
  .strict();

export type PlanLimits = Required<z.infer<typeof planSchema>>;

const GB = 1024 * MB;
export const DEFAULT_PLANS: Record<"free" | "pro" | "max", PlanLimits> = {
  free: {
    monthlyCredits: 1_000_000,
    freeTierOnly: true,
    requestsPerMinute: 20,
    imageMaxN: 1,
    imageMaxResolution: "1K",
    storageBytes: 100 * MB,
    storageOperationsPerPeriod: 100,
    lowLatencyRouting: false,
  },
  pro: {
    monthlyCredits: 20_000_000,
    freeTierOnly: false,
    requestsPerMinute: 600,
    imageMaxN: 4,
    imageMaxResolution: "2K",
    storageBytes: 5 * GB,
    storageOperationsPerPeriod: 500,
    lowLatencyRouting: false,
  },
  max: {
    monthlyCredits: 200_000_000,
    freeTierOnly: false,
    requestsPerMinute: 6000,
    imageMaxN: 10,
    imageMaxResolution: "4K",
    storageBytes: 10 * GB,
    storageOperationsPerPeriod: 5000,
    lowLatencyRouting: true,
  },
};

export const storageSchema = z
  .object({
    /** "fs" (streams to $GW_HOME/data/blobs) or an unstorage driver by name ("s3", "redis" ...). Changing it needs a restart. */
    driver: z
      .string()
      .regex(/^[A-Za-z0-9-]+$/, "an unstorage driver name")
      .default("fs"),
    /** Options for the driver: fs takes `base`; s3 takes endpoint, bucket, region, accessKeyId, secretAccessKey ... */
    options: z.record(z.string(), z.unknown()).default({}),
    /** Largest stored file in bytes (default 50 MB, the same for every plan). */
    maxFileBytes: positiveInt.default(50 * MB),
    /** Lifetime of signed upload and download links in seconds (default 3600, docs/decisions.md §5; at most 7 days, as S3). */
    linkTtlSeconds: positiveInt.max(604_800).default(3600),
    /**
     * HMAC secret for signed links (at least 32 characters; "${NAME}" reads it from the environment,
     * which lets several gateways share it). null: a generated key in $GW_HOME/data/storage/signing.key.
     */
    signingSecret: z.string().min(32, "use at least 32 characters").nullable().default(null),
  })
  .strict();

/**
 * Where balances, keys, rate limits, jobs and the other shared state live (docs/decisions.md §21).
 * "embedded": this home's files, one `gw serve` per home. "redis": one Redis shared by several
 * `gw serve` instances (docs/deploy.md). Changing it needs a restart.
 */
export const stateSchema = z
  .object({
    driver: z.enum(["embedded", "redis"]).default("embedded"),
    /** redis://[user:password@]host:port[/db] or rediss://...; "${NAME}" reads it from the environment. Required for redis. */
    url: z.string().min(1).optional(),
    /** Prepended to every key, so several deployments can share one Redis. */
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,32}$/, "1-32 letters, digits, _ . : -")
      .default("gw:"),
    /** The longest wait for one Redis command; a request whose state does not answer in time gets 503 state_unavailable. */
    commandTimeoutMs: z.number().int().min(50).max(2000).default(1500),
  })
  .strict()
  .superRefine((state, context) => {
    if (state.driver === "redis" && state.url === undefined)
      context.addIssue({ code: "custom", path: ["url"], message: 'the redis driver needs a url ("redis://host:6379", or "${REDIS_URL}")' });
  });

/** Stored Responses API responses (docs/decisions.md §19). */
export const responsesSchema = z
  .object({
    /** How long a stored response (and the conversation it answered) is kept for previous_response_id, GET and input_items. */
    retentionDays: positiveInt.max(3650).default(30),
  })
  .strict();

export const videoSchema = z
  .object({
    /** How often the poller's schedule runs: submits queued jobs and polls running ones (seconds, 1-60). */
    tickSeconds: z.number().int().min(1).max(60).default(2),
    /** The least time between two polls of one vendor task; later polls back off up to 6 times this. */
    pollIntervalSeconds: positiveInt.default(5),
    /** A job not finished this long after it was queued fails with an error saying so. */
    maxJobMinutes: positiveInt.default(30),
    /** How long a finished clip's link is valid: it sets the job's resultExpiresAt (docs/decisions.md §8). */
    resultTtlHours: positiveInt.max(24 * 365).default(24),
    /** Vendor tasks submitted or polled at once per provider. */
    concurrencyPerProvider: positiveInt.default(2),
    /** Local clips rendered at once (each one is an ffmpeg process). */
    localConcurrency: positiveInt.default(1),
    /** Largest clip downloaded from a vendor. */
    maxClipBytes: positiveInt.default(512 * 1024 * 1024),
  })
  .strict();

export const billingSchema = z
  .object({
    /** Credits are integer micro-dollars: a price of $X per million tokens is X credits per token. */
    creditsPerUsd: positiveInt.default(1_000_000),
    /** Price used for a chat model that has no `pricing` entry. */
    defaultChatPricing: pricingSchema.default({ input_per_mtok: 1, output_per_mtok: 3 }),
    /**
     * A model's output limit when its catalog entry names none: a chat request without max_tokens
     * is sent with the max_tokens its balance can pay for, at most this (or the model's limit).
     */
    defaultMaxOutputTokens: positiveInt.default(4096),
    /**
     * The fewest max_tokens gw fills in for a request that names none (at most the model's own
     * limit): a balance that pays for fewer gets 402 saying which max_tokens would fit, rather
     * than an answer cut short. A request naming a smaller max_tokens is served.
     */
    minimumAnswerTokens: positiveInt.default(256),
    /** No longer used (defaultMaxOutputTokens replaced it); accepted so older config files still load. */
    defaultReservedOutputTokens: positiveInt.optional(),
    /**
     * What an answer from the response cache costs, as a share of the credits the call it repeats
     * was billed: 0 (the default) is free, 1 the full price (docs/decisions.md §22).
     */
    cacheHitPrice: z.number().min(0).max(1).default(0),
    /** The share taken off the price of a batch's lines (0.5: half price, as the vendors do); 0 by default (docs/decisions.md §23). */
    batchDiscount: z.number().min(0).max(1).default(0),
  })
  .strict();

/** Batches run by gw (docs/decisions.md §23). */
export const batchSchema = z
  .object({
    /** Lines of one batch run at once. */
    concurrency: positiveInt.max(64).default(4),
    /** Lines of one agent's batches run at once on one instance, over all its batches. */
    concurrencyPerAgent: positiveInt.max(256).default(8),
    /** The most request lines one batch may hold. */
    maxLines: positiveInt.default(50_000),
    /** How often the runner looks for batches to work (and for a cancel), in seconds. */
    tickSeconds: z.number().int().min(1).max(60).default(1),
  })
  .strict();

/** The response cache (docs/decisions.md §22): off unless a key or a request asks for it. */
export const cacheSchema = z
  .object({
    /** The most bytes the cache keeps over every agent; the least recently used entries go first. */
    maxBytes: positiveInt.default(256 * 1024 * 1024),
    /** An answer larger than this is not cached. */
    maxEntryBytes: positiveInt.default(4 * 1024 * 1024),
    /** The longest lifetime a key or a request may give an entry. */
    maxTtlSeconds: positiveInt.default(30 * 86_400),
  })
  .strict();

/** The admin API and console (docs/decisions.md §25): on while an admin token exists. */
export const adminSchema = z
  .object({
    /**
     * Addresses (CIDR ranges like "10.0.0.0/8", or single addresses) that may reach /admin and
     * /console besides loopback. Empty: loopback only. Behind a proxy on the same host, every
     * client is the proxy's loopback address: restrict those paths at the proxy too.
     */
    allowFrom: z.array(z.string().refine(isAddressOrRange, "expected an IP address or a CIDR range such as 10.0.0.0/8")).default([]),
  })
  .strict();

/**
 * OpenTelemetry traces (docs/decisions.md §26): off unless `otlp.endpoint` is set. Read at start:
 * a change needs a restart.
 */
export const telemetrySchema = z
  .object({
    otlp: z
      .object({
        /**
         * The collector's OTLP/HTTP base URL (e.g. "http://127.0.0.1:4318"); spans go to its
         * /v1/traces. "" (an unset "${NAME}"): no traces.
         */
        endpoint: z
          .string()
          .refine((value) => value === "" || isHttpUrl(value), "expected an http(s) URL such as http://127.0.0.1:4318")
          .default(""),
        /** Headers sent with each export (a collector's API key: use "${NAME}"). */
        headers: z.record(z.string(), z.string()).default({}),
        protocol: z.enum(["http/protobuf", "http/json"]).default("http/protobuf"),
      })
      .strict()
      .optional(),
    /** The `service.name` of the exported resource (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over it). */
    serviceName: z.string().min(1).default("gw"),
    /** Export what a request asked (its messages, prompt, input) on its span; never by default. Completions are never exported. */
    captureContent: z.boolean().default(false),
  })
  .strict();

function isHttpUrl(value: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

export const configSchema = z
  .object({
    $schema: z.string().optional(),
    server: serverSchema.default(serverSchema.parse({})),
    state: stateSchema.default(stateSchema.parse({})),
    storage: storageSchema.default(storageSchema.parse({})),
    upstream: upstreamSchema.default(upstreamSchema.parse({})),
    providers: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/i, "provider names are letters, digits, - and _"), providerSchema).default({}),
    routes: z.array(routeSchema).default([]),
    models: z.array(modelSchema).default([]),
    tools: z.record(z.string(), toolSchema).default({}),
    /** Tool models (image today): constraints and prices per model, beside `tools` (docs/decisions.md §6). */
    catalog: catalogSchema.default(() => catalogSchema.parse({})),
    billing: billingSchema.default(billingSchema.parse({})),
    video: videoSchema.default(videoSchema.parse({})),
    responses: responsesSchema.default(responsesSchema.parse({})),
    cache: cacheSchema.default(cacheSchema.parse({})),
    batch: batchSchema.default(batchSchema.parse({})),
    admin: adminSchema.default(adminSchema.parse({})),
    telemetry: telemetrySchema.default(telemetrySchema.parse({})),
    plans: z.record(z.string(), planSchema).default({}),
    /** Other plan names accepted as aliases (older names: Assistant is pro, Engineer is max). */
    planAliases: z.record(z.string(), z.string()).default({ assistant: "pro", engineer: "max" }),
  })
  .strict()
  .superRefine((config, context) => {
    config.routes.forEach((route, index) => {
      const names = route.upstreams ? route.upstreams.map((upstream) => upstream.provider) : [route.provider];
      names.forEach((name) => {
        // Runs after a route naming neither was refused (its refinement does not stop parsing): no second issue for it.
        if (name && !Object.hasOwn(config.providers, name)) {
          context.addIssue({ code: "custom", path: ["routes", index, route.upstreams ? "upstreams" : "provider"], message: `unknown provider "${name}"` });
        }
      });
    });
    for (const [name, provider] of Object.entries(config.providers)) {
      if (provider.responsesApi !== undefined && provider.type !== "openai") {
        const message = `provider "${name}" has type "${provider.type}": only providers of type "openai" take responsesApi`;
        context.addIssue({ code: "custom", path: ["providers", name, "responsesApi"], message });
      }
    }
    if (config.state.driver === "redis") {
      // Several instances: a link signed by one must verify on all, and a file stored by one must be readable by all.
      if (config.storage.signingSecret === null)
        context.addIssue({
          code: "custom",
          path: ["storage", "signingSecret"],
          message: 'the redis state is shared by several instances, which must sign links with one secret: set it (for example "${GW_SIGNING_SECRET}")',
        });
      if (config.storage.driver === "fs" && typeof config.storage.options.base !== "string")
        context.addIssue({
          code: "custom",
          path: ["storage", "driver"],
          message:
            'the redis state is shared by several instances, whose files must be stored where all of them read: use driver "s3" (or "fs" with options.base on a shared volume)',
        });
    }
    for (const [alias, target] of Object.entries(config.planAliases)) {
      if (!Object.hasOwn(DEFAULT_PLANS, target) && !Object.hasOwn(config.plans, target)) {
        context.addIssue({ code: "custom", path: ["planAliases", alias], message: `unknown plan "${target}"` });
      }
    }
  });

export type ConfigInput = z.input<typeof configSchema>;
export type StateSettings = z.output<typeof stateSchema>;
export type CacheSettings = z.output<typeof cacheSchema>;
export type TelemetrySettings = z.output<typeof telemetrySchema>;
export type StateInput = z.input<typeof stateSchema>;
export type ParsedConfig = z.output<typeof configSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
export type RouteConfig = z.output<typeof routeSchema>;
export type ModelConfig = z.output<typeof modelSchema>;
export type UpstreamSettings = z.output<typeof upstreamSchema>;
export type AnswerCaps = UpstreamSettings["maxAnswerBytes"];
/** A provider's `upstream` section: the settings it changes, caps one by one. */
export type UpstreamOverride = Partial<Omit<UpstreamSettings, "maxAnswerBytes">> & { maxAnswerBytes?: Partial<AnswerCaps> };

/** The upstream settings a provider's calls use: the global section, then what its own section changes. */
export function upstreamSettingsFor(config: { upstream: UpstreamSettings; providers: Record<string, ProviderConfig> }, provider: string): UpstreamSettings {
  const own = Object.hasOwn(config.providers, provider) ? config.providers[provider]?.upstream : undefined;
  if (!own) return config.upstream;
  return { ...config.upstream, ...own, maxAnswerBytes: { ...config.upstream.maxAnswerBytes, ...own.maxAnswerBytes } };
}
export type Pricing = z.output<typeof pricingSchema>;
export type StorageSettings = z.output<typeof storageSchema>;
