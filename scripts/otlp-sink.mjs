// An OTLP/HTTP collector that accepts every export and keeps nothing: where `gw serve` sends its
// spans when a benchmark measures it with traces on (bench/start-gw.sh, GW_BENCH_TELEMETRY).
// `node scripts/otlp-sink.mjs [--parent PID]` prints `listening on http://127.0.0.1:PORT` and
// answers each POST an empty success in the protocol it was sent; with --parent it exits once
// that process has (the gateway it serves), so a benchmark that stops the gateway stops it too.
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { parent: { type: "string" }, port: { type: "string", default: "0" } } });
let exports = 0;
let bytes = 0;

const server = createServer((request, response) => {
  request.on("data", (chunk) => (bytes += chunk.length));
  request.on("end", () => {
    exports += 1;
    const json = (request.headers["content-type"] ?? "").startsWith("application/json");
    // An empty ExportTraceServiceResponse: `{}` in JSON, no bytes in protobuf.
    response.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
    response.end(json ? "{}" : "");
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});

const stop = () => {
  console.error(`otlp-sink: ${exports} exports, ${bytes} bytes`);
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
if (values.parent) {
  const parent = Number(values.parent);
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      stop();
    }
  }, 500);
}
