// Where `telemetry.otlp.endpoint` sends spans: the collector's base URL with /v1/traces added to
// its path, the rule OTLP gives for OTEL_EXPORTER_OTLP_ENDPOINT (so one value serves both); a path
// already ending so is kept, and so is a query. The server's exporter posts there and `gw doctor`
// names it. The config schema has checked that the endpoint is an http(s) URL.

export function otlpTracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/v1/traces") ? path : `${path}/v1/traces`;
  return url.href;
}
