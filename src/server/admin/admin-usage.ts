// GET /admin/v1/usage: `gw usage --format json|csv` over HTTP (docs/decisions.md §25), made by the
// same report (src/admin/usage-report.ts) from the same usage history, with the same ranges
// (`period`, or `since`/`until`), `agent`, `by` and `tag` filters. The document streams: a month
// of a million rows is never held whole.
import { once } from "node:events";
import { PassThrough, Readable } from "node:stream";
import { type H3Event, HTTPResponse } from "h3";
import { AdminInputError, AdminLookupError } from "../../admin/admin-requests.js";
import { USAGE_DIMENSIONS, type UsageDimension } from "../../admin/usage-groups.js";
import { reportRange } from "../../admin/usage-range.js";
import { printUsage, type ReportOutput, type UsageOptions } from "../../admin/usage-report.js";
import { AdminNotFoundError, InvalidRequestError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { isTag, TAG_RULE } from "../../text/tag-syntax.js";
import type { ServerLogger } from "../server-logger.js";
import type { AdminRoutes } from "./admin-routes.js";

const FORMATS = ["json", "csv"] as const;

export function registerAdminUsage(app: AdminRoutes, gateway: Gateway, logger: ServerLogger): void {
  app.get("/admin/v1/usage", async (event) => {
    const options = usageOptions(event);
    const body = new PassThrough();
    let started = false;
    let start!: () => void;
    const firstBytes = new Promise<void>((resolve) => (start = resolve));
    const out: ReportOutput = {
      async write(text) {
        started = true;
        start();
        if (!body.write(text)) await once(body, "drain");
      },
      // json and csv are documents: the table and chart are the terminal's.
      line: () => undefined,
      table: () => undefined,
      chart: () => [],
      note: (warning) => logger.warn(warning),
    };
    const report = printUsage(out, gateway.config, gateway.store.data, gateway.state.history, options).then(
      () => void body.end(),
      (error: unknown) => {
        // Once the answer has begun, the failure cuts it short; before, the error is the answer.
        if (started) body.destroy(error instanceof Error ? error : new Error(String(error)));
        throw error;
      },
    );
    // A refusal found before the first byte (an unknown agent) is answered as an error; a failure later cuts the body.
    try {
      await Promise.race([firstBytes, report]);
    } catch (error) {
      if (error instanceof AdminLookupError) throw new AdminNotFoundError(`No agent "${options.agent}".`);
      throw error;
    }
    report.catch((error: unknown) => logger.error(error));
    const csv = options.format === "csv";
    return new HTTPResponse(Readable.toWeb(body) as ReadableStream, {
      headers: csv
        ? { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="usage-${rangeName(options)}.csv"` }
        : { "content-type": "application/json; charset=utf-8" },
    });
  });
}

function usageOptions(event: H3Event): UsageOptions & { format: "json" | "csv" } {
  const query = event.url.searchParams;
  const format = query.get("format") ?? "json";
  if (!(FORMATS as readonly string[]).includes(format))
    throw new InvalidRequestError(`Invalid 'format': expected ${FORMATS.join(" or ")}.`, { param: "format" });
  const by = query.get("by");
  if (by !== null && !(USAGE_DIMENSIONS as readonly string[]).includes(by))
    throw new InvalidRequestError(`Invalid 'by': expected one of ${USAGE_DIMENSIONS.join(", ")}.`, { param: "by" });
  const tags = query.getAll("tag");
  for (const tag of tags) if (!isTag(tag)) throw new InvalidRequestError(`Invalid 'tag' ${JSON.stringify(tag)}: a tag is ${TAG_RULE}.`, { param: "tag" });
  const agent = query.get("agent");
  const now = new Date();
  const flags = { period: query.get("period") ?? undefined, since: query.get("since") ?? undefined, until: query.get("until") ?? undefined };
  if (flags.period !== undefined && (flags.since !== undefined || flags.until !== undefined))
    throw new InvalidRequestError("Give 'period' or 'since'/'until', not both.", { param: "period" });
  let range: UsageOptions["range"];
  try {
    range = reportRange(flags, now, (field) => `'${field}'`);
  } catch (error) {
    if (error instanceof AdminInputError) throw new InvalidRequestError(`Invalid ${error.message}.`, { param: error.param });
    throw error;
  }
  return {
    range,
    ...(agent === null ? {} : { agent }),
    ...(by === null ? {} : { by: by as UsageDimension }),
    ...(tags.length === 0 ? {} : { tags }),
    format: format as "json" | "csv",
    chart: false,
    allRows: false,
    now,
  };
}

function rangeName(options: UsageOptions): string {
  const { range } = options;
  return range.period ?? `${new Date(range.since).toISOString().slice(0, 10)}-${new Date(range.until - 1).toISOString().slice(0, 10)}`;
}
