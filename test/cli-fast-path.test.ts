// The start-up fast path (src/cli/fast-path.ts): `gw --version`, `gw keys list` and `gw models`
// answered without oclif print, fail and exit exactly as oclif's own run of the same command
// line, which is run here beside it (bin/run.js's oclif branch, without the fast path). Command
// lines it does not take go to oclif untouched; the JSON GETs it sends over node:http read as fetch.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { gzipSync } from "node:zlib";
import test from "ava";
import KeysList from "../commands/keys/list.js";
import Models from "../commands/models.js";
import Serve from "../commands/serve.js";
import { FAST_COMMANDS, type FastFlagType, LOG_LEVEL_VALUES, parseFlags, SERVE_FLAGS, serveFlags } from "../src/cli/fast-path.js";
import { groupedNumber } from "../src/cli/output.js";
import { answerShape, hasList } from "../src/client/answer-shape.js";
import { GwApiError } from "../src/client/gw-api-error.js";
import { HttpTransport } from "../src/client/http-transport.js";
import { LOG_LEVELS } from "../src/server/server-logger.js";
import { type GwResult, gw, runNode } from "./_gw-cli.js";
import { addKey, editHomeConfig, makeHome, projectRoot, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/** bin/run.js's oclif branch alone: what every command line printed before the fast path. */
const OCLIF_ONLY = `import { execute, settings } from "@oclif/core";
settings.enableAutoTranspile = false;
await execute({ dir: ${JSON.stringify(`${projectRoot}/bin/run.js`)}, args: process.argv.slice(1) });`;

function throughOclif(args: string[], options: { home?: string; env?: Record<string, string | undefined> } = {}): Promise<GwResult> {
  return runNode(["--input-type=module", "-e", OCLIF_ONLY, "--", ...args], { ...options, cwd: projectRoot });
}

/** Both runs of `args`, which must agree to the byte. */
async function bothAgree(
  t: { deepEqual: (a: GwResult, b: GwResult, message?: string) => void },
  args: string[],
  options: { home?: string; env?: Record<string, string | undefined> } = {},
) {
  const [fast, oclif] = await Promise.all([gw(args, options), throughOclif(args, options)]);
  t.deepEqual(fast, oclif, `gw ${args.join(" ")}`);
  return fast;
}

let home: string;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  home = await makeHome((config) => {
    config.models = [
      { id: "fake/priced", name: "Priced", context_length: 128000, created: 1700000000, pricing: { input_per_mtok: 1, output_per_mtok: 2 } },
      { id: "fake/default", name: "Default", context_length: 8192, created: 1700000000 },
    ];
    config.providers = { fake: { type: "openai", baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-fake" } };
    config.routes = [{ prefix: "fake/", provider: "fake" }];
  });
  key = await addKey(home, "ann", "pro");
  await addKey(home, "bob", "free", { rpm: 12000, tpm: 1234567, models: ["fake/*"], budget: { credits: 5, period: "month" } });
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
});

test("gw --version prints oclif's own line; -v and version stay what oclif makes of them", async (t) => {
  const version = await bothAgree(t, ["--version"]);
  t.regex(version.stdout, /^gw\/\d+\.\d+\.\d+ \w+-\w+ node-v\d+\.\d+\.\d+\n$/);
  t.is(version.code, 0);
  await bothAgree(t, ["--version", "extra"]);
  const short = await bothAgree(t, ["-v"]);
  t.is(short.code, 127, "not a gw command, as before");
  await bothAgree(t, ["version"]);
});

test("gw keys list: tables, JSON and failures as oclif prints them", async (t) => {
  const cases = [
    ["keys", "list"],
    ["keys", "list", "--json"],
    ["keys", "list", "--revoked"],
    ["keys", "list", "--agent", "bob"],
    ["keys", "list", "--agent=bob", "--json"],
    ["keys", "list", "--agent", "nobody"],
    ["keys", "list", "--home", `${home}-missing`],
    ["keys", "list", "--url", "ftp://example"],
    ["keys", "list", "--admin-token", "t"],
    ["keys", "list", "--url", "http://127.0.0.1:9", "--admin-token", "t"],
  ];
  for (const args of cases) await bothAgree(t, args, { home });
  const table = await gw(["keys", "list"], { home });
  t.regex(table.stdout, /^NAME\s+PREFIX\s+AGENT\s+PLAN\s+RPM\s+TPM/m);
  t.regex(table.stdout, /12,000\s+1,234,567/, "numbers grouped as toLocaleString does");
});

test("command lines the fast path does not take are oclif's: help, unknown or repeated flags, arguments", async (t) => {
  const cases = [
    ["keys", "list", "--help"],
    ["keys", "list", "--agnt", "bob"],
    ["keys", "list", "--agent"],
    ["keys", "list", "--agent", "--json"],
    ["keys", "list", "--json", "--json"],
    ["keys", "list", "--json=true"],
    ["keys", "list", "extra"],
    ["keys", "list", "--", "--json"],
    ["keys:list"],
    ["models", "--nope"],
  ];
  for (const args of cases) await bothAgree(t, args, { home });
  // What changes oclif's own output sends the line to oclif too.
  const forcedJson = await gw(["keys", "list"], { home, env: { GW_CONTENT_TYPE: "json" } });
  t.is(forcedJson.code, 0, forcedJson.stderr);
  t.true(Array.isArray(JSON.parse(forcedJson.stdout)), "GW_CONTENT_TYPE=json prints JSON, as oclif does");
});

// Serial: it points the home's config at the gateway, which the other tests' commands read.
test.serial("gw models: the table, JSON and the gateway's failures as oclif prints them", async (t) => {
  const env = { GW_BASE_URL: gateway.url, GW_API_KEY: key };
  await bothAgree(t, ["models"], { home, env });
  await bothAgree(t, ["models", "--json"], { home, env });
  await bothAgree(t, ["models", "--api-key", "gw_wrong"], { home, env });
  await bothAgree(t, ["models"], { home, env: { ...env, GW_API_KEY: undefined } });
  await bothAgree(t, ["models", "--base-url", "http://127.0.0.1:9"], { home, env });
  await bothAgree(t, ["models", "--base-url=ftp://example"], { home, env });
  // The home's own server: default-priced models are marked from the home's config.
  editHomeConfig(home, (config) => {
    config.server = { ...config.server, host: "127.0.0.1", port: Number(new URL(gateway.url).port) };
  });
  const own = await bothAgree(t, ["models"], { home, env: { GW_API_KEY: key } });
  t.regex(own.stdout, /^fake\/default\s.*\sdefault \$1\/\$3$/m);
  t.regex(own.stdout, /^fake\/priced\s.*128,000.*\s\$1\/\$2$/m);
});

test("the fast path's flag tables are the oclif commands' flags", (t) => {
  const tableOf = (command: { flags?: Record<string, { type: string }>; baseFlags?: Record<string, { type: string }> }) =>
    Object.fromEntries(
      Object.entries({ ...command.baseFlags, ...command.flags }).map(([name, flag]) => [
        name,
        (flag.type === "boolean" ? "boolean" : "string") as FastFlagType,
      ]),
    );
  t.deepEqual(FAST_COMMANDS["keys list"]?.flags, tableOf(KeysList));
  t.deepEqual(FAST_COMMANDS.models?.flags, tableOf(Models));
  t.deepEqual(SERVE_FLAGS, tableOf(Serve));
});

test("parseFlags takes only what oclif parses the same way", (t) => {
  const known = { home: "string", json: "boolean" } as const;
  const parsed = parseFlags(["--home", "/h", "--json"], known);
  t.is(parsed?.string("home"), "/h");
  t.true(parsed?.boolean("json"));
  t.is(parseFlags(["--home=/a=b"], known)?.string("home"), "/a=b");
  t.false(parseFlags([], known)?.boolean("json"));
  for (const refused of [
    ["--home"],
    ["--home", ""],
    ["--home="],
    ["--home", "-x"],
    ["--json=1"],
    ["--json", "--json"],
    ["-h"],
    ["--"],
    ["x"],
    ["--constructor", "1"],
  ]) {
    t.is(parseFlags(refused, known), undefined, refused.join(" "));
  }
});

test("gw serve's fast path takes the values oclif takes and leaves the rest to oclif's messages", (t) => {
  t.deepEqual(serveFlags(["--port", "0", "--host", "127.0.0.1", "--log-level", "warn", "--log-format", "json", "--https", "--init"]), {
    home: undefined,
    init: true,
    host: "127.0.0.1",
    port: 0,
    https: true,
    "tls-cert": undefined,
    "tls-key": undefined,
    "log-level": "warn",
    "log-format": "json",
  });
  t.is(serveFlags([])?.["log-level"], "info", "oclif's default level");
  t.is(serveFlags(["--port=65535"])?.port, 65535);
  for (const refused of [
    ["--port", "65536"],
    ["--port", "1.5"],
    ["--port", "x"],
    ["--port", "-1"],
    ["--log-level", "loud"],
    ["--log-format", "xml"],
    ["--nope"],
  ]) {
    t.is(serveFlags(refused), undefined, refused.join(" "));
  }
  t.deepEqual([...LOG_LEVEL_VALUES], [...LOG_LEVELS]);
});

test("gw serve's refusals read the same through the fast path and through oclif", async (t) => {
  // A home whose parent is missing is refused before anything starts: exit 2 and one line, both ways.
  await bothAgree(t, ["serve", "--home", path.join(home, "missing", "home"), "--port", "0"], { home });
  await bothAgree(t, ["serve", "--tls-cert", "cert.pem", "--port", "0"], { home });
  // Values oclif refuses get oclif's own messages.
  await bothAgree(t, ["serve", "--port", "70000"], { home });
  await bothAgree(t, ["serve", "--log-level", "loud"], { home });
});

test("groupedNumber is toLocaleString('en-US') without loading ICU's formatting", (t) => {
  const values = [0, 7, -7, 999, 1000, -1000, 12345, 1234567, -9876543210, Number.MAX_SAFE_INTEGER, -0, 1.5, 1234.5678, Number.NaN, 1e21];
  for (let digits = 1; digits <= 16; digits++) values.push(10 ** digits - 1, -(10 ** digits), 10 ** digits + 1);
  for (const value of values) t.is(groupedNumber(value), value.toLocaleString("en-US"), String(value));
});

// The plain GET (src/client/plain-get.ts) against the same transport forced through fetch.
async function startServer(handle: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const LIST = answerShape("list", (body: unknown): body is { data: unknown[] } => hasList(body, "data"));

async function outcome(transport: HttpTransport, path: string): Promise<unknown> {
  try {
    return { value: await transport.json(path, LIST, { auth: false }) };
  } catch (error) {
    if (!(error instanceof GwApiError)) return { thrown: String(error) };
    return {
      message: error.message,
      status: error.status,
      type: error.type,
      code: error.code,
      requestId: error.requestId,
      retryAfter: error.retryAfterSeconds,
    };
  }
}

test("a JSON GET over node:http reads every answer as fetch does, and leaves to fetch what it does not read", async (t) => {
  const seen: string[] = [];
  const { server, url } = await startServer((request, response) => {
    seen.push(`${request.url} ${request.headers["user-agent"]} ${request.headers["accept-language"]}`);
    const send = (status: number, body: string | Buffer, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...headers });
      response.end(body);
    };
    if (request.url === "/ok") return send(200, '{"data":[1,2]}');
    if (request.url === "/bom") return send(200, '\uFEFF{"data":[]}');
    if (request.url === "/moved") return send(302, "", { location: "/ok" });
    if (request.url === "/gzip") return send(200, gzipSync('{"data":["z"]}'), { "content-encoding": "gzip" });
    if (request.url === "/limited")
      return send(429, '{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}', {
        "x-request-id": "req_1",
        "retry-after": "3",
      });
    if (request.url === "/html") return send(502, "<html>bad gateway</html>", { "content-type": "text/html" });
    if (request.url === "/not-json") return send(200, "plain words");
    if (request.url === "/not-list") return send(200, '{"data":"x"}');
    return send(404, '{"error":{"message":"no such path","type":"not_found_error"}}');
  });
  try {
    const plain = new HttpTransport({ baseUrl: url, plainGets: true });
    const viaFetch = new HttpTransport({ baseUrl: url, fetch: (input, init) => fetch(input, init) });
    for (const path of ["/ok", "/bom", "/moved", "/gzip", "/limited", "/html", "/not-json", "/not-list", "/missing"]) {
      t.deepEqual(await outcome(plain, path), await outcome(viaFetch, path), path);
    }
    t.true(
      seen.filter((line) => line.startsWith("/ok ")).every((line) => line === "/ok node *"),
      "the headers fetch sends",
    );
  } finally {
    server.close();
  }
  const refused = new HttpTransport({ baseUrl: url, plainGets: true });
  t.deepEqual(await outcome(refused, "/ok"), await outcome(new HttpTransport({ baseUrl: url, fetch: (input, init) => fetch(input, init) }), "/ok"));
});
