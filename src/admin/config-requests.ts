// The bodies the admin API takes for config changes (docs/decisions.md §25), one field per flag of
// the matching `gw plans|providers|routes|tools` command, under the config's own names. They check
// the form of each field; what a value means (a range, a provider a route names) is checked when
// the changed config is validated as a whole, as for the commands.
import { z } from "zod";

const integer = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
const name = z.string().min(1).max(200);

/** `gw plans set PLAN [--create] [limits]`: the limits to set (others stay), `create` to define a new plan. */
export const planSetSchema = z
  .object({
    create: z.boolean().optional(),
    monthlyCredits: integer.optional(),
    requestsPerMinute: integer.optional(),
    imageMaxN: integer.optional(),
    imageMaxResolution: z.enum(["512", "1K", "2K", "4K"]).optional(),
    storageBytes: integer.optional(),
    storageOperationsPerPeriod: integer.optional(),
    freeTierOnly: z.boolean().optional(),
    lowLatencyRouting: z.boolean().optional(),
  })
  .strict();

/** A header's name, as `--header name=value` takes it. */
const headerName = z.string().trim().min(1);

/** `gw providers add NAME --type T [--base-url U] [--api-key K] [--header n=v ...]`. */
export const providerAddSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/i, "provider names are letters, digits, - and _"),
    type: z.string().min(1),
    baseUrl: z.string().min(1).optional(),
    apiKey: z.string().min(1).optional(),
    headers: z.record(headerName, z.string()).optional(),
  })
  .strict();

/** `gw providers set NAME ...`: only what is given changes; `null` removes a base URL, a key or a header. */
export const providerUpdateSchema = z
  .object({
    type: z.string().min(1).optional(),
    baseUrl: z.string().min(1).nullable().optional(),
    apiKey: z.string().min(1).nullable().optional(),
    headers: z.record(headerName, z.string().min(1).nullable()).optional(),
  })
  .strict();

const upstream = z
  .object({
    provider: name,
    model: name,
    weight: z.number().positive().optional(),
  })
  .strict();

/** `gw routes add PREFIX (--provider P | --upstream p:m:w ...) [--model M] [--priority N] [--free-tier] [--replace]`. */
export const routeAddSchema = z
  .object({
    prefix: name,
    provider: name.optional(),
    upstreams: z.array(upstream).min(1).optional(),
    model: name.optional(),
    priority: integer.optional(),
    freeTier: z.boolean().optional(),
    replace: z.boolean().optional(),
  })
  .strict();

/** `gw routes set PREFIX [--priority N] [--free-tier|--no-free-tier] [--model M]`; `model: null` stops sending a model of the route's own. */
export const routeUpdateSchema = z
  .object({
    priority: integer.optional(),
    freeTier: z.boolean().optional(),
    model: name.nullable().optional(),
  })
  .strict();

/** `gw tools enable TOOL MODEL [--default]`. */
export const toolEnableSchema = z.object({ model: name, default: z.boolean().optional() }).strict();

export type PlanSetBody = z.input<typeof planSetSchema>;
export type ProviderAddBody = z.input<typeof providerAddSchema>;
export type ProviderUpdateBody = z.input<typeof providerUpdateSchema>;
export type RouteAddBody = z.input<typeof routeAddSchema>;
export type RouteUpdateBody = z.input<typeof routeUpdateSchema>;
