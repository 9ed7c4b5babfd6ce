// The OTLP/HTTP span exporter of the configured protocol, from the official exporter packages:
// only the chosen protocol's package is loaded.
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { TelemetrySettings } from "../../config/config-schema.js";
import { otlpTracesUrl } from "../../config/otlp-endpoint.js";

export type OtlpSettings = NonNullable<TelemetrySettings["otlp"]>;

export async function otlpExporter(otlp: OtlpSettings): Promise<SpanExporter> {
  const options = { url: otlpTracesUrl(otlp.endpoint), headers: otlp.headers };
  if (otlp.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter(options);
}
