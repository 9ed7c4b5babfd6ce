// `gw doctor`'s line about traces, when the config exports them (docs/decisions.md §26): where
// spans go and how. The address is shown without any user or password it carries, and the
// export headers by name only: they usually hold the collector's key.
import type { TelemetrySettings } from "../config/config-schema.js";
import { otlpTracesUrl } from "../config/otlp-endpoint.js";
import type { DoctorCheck } from "./doctor-check-types.js";

/** The check, or none when traces are off. */
export function telemetryCheck(settings: TelemetrySettings): DoctorCheck | undefined {
  const otlp = settings.otlp;
  if (!otlp?.endpoint) return undefined;
  const url = new URL(otlpTracesUrl(otlp.endpoint));
  url.username = "";
  url.password = "";
  url.search = "";
  const headers = Object.keys(otlp.headers);
  const sent = headers.length > 0 ? `, with the header${headers.length > 1 ? "s" : ""} ${headers.join(", ")}` : "";
  const content = settings.captureContent ? "; prompts are exported (captureContent)" : "";
  return { name: "telemetry", status: "ok", detail: `traces exported over OTLP/HTTP (${otlp.protocol}) to ${url.href}${sent}${content}` };
}
