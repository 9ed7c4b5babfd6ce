// `gw models` and `gw chat` as subprocesses against a stand-in gateway on port 0 that speaks the
// gateway's wire format (spec: models list, chat completion, SSE chunks ending in [DONE]).

import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import test from "ava";
import { editConfig } from "../src/config/config-file.js";
import { initHome } from "../src/config/init-home.js";
import { homePaths } from "../src/config/paths.js";
import { gw, json, removeTempHomes, tempHome } from "./_gw-cli.js";

const API_KEY = "gw_testkey";

const MODELS = {
  object: "list",
  data: [
    {
      id: "openai/gpt-4o-mini",
      name: "GPT-4o mini",
      context_length: 128000,
      created: 1721172741,
      architecture: { input_modalities: ["text", "image"], output_modalities: ["text"] },
    },
  ],
};

interface Gateway {
  url: string;
  port: number;
  bodies: Array<Record<string, unknown>>;
  /** Resolve to let a held stream (model "hold") send the rest of its chunks. */
  release: () => void;
  close: () => Promise<void>;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "openai/gpt-4o-mini", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

async function startGateway(): Promise<Gateway> {
  const bodies: Array<Record<string, unknown>> = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const server = http.createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json", "x-request-id": "req_1" });
      response.end(JSON.stringify(body));
    };
    if (request.headers.authorization !== `Bearer ${API_KEY}`) {
      return send(401, { error: { message: "Invalid API key provided.", type: "authentication_error", code: "invalid_api_key" } });
    }
    if (request.method === "GET" && request.url === "/v1/models") return send(200, MODELS);
    // Any other GET (`gw models` asks GET /v1/models/auto) is a model this stand-in does not know.
    if (request.method === "GET") return send(404, { error: { message: "No such model.", type: "invalid_request_error", code: "model_not_found" } });
    let text = "";
    request.on("data", (data: Buffer) => (text += data.toString()));
    request.on("end", async () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      bodies.push(body);
      if (body.model === "missing")
        return send(404, { error: { message: "The model `missing` does not exist.", type: "invalid_request_error", code: "model_not_found" } });
      if (!body.stream) {
        return send(200, {
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 1,
          model: "openai/gpt-4o-mini",
          choices: [{ index: 0, message: { role: "assistant", content: "Hello there" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        });
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.write(chunk({ role: "assistant", content: "" }));
      response.write(chunk({ content: "Hel" }));
      if (body.model === "boom") {
        response.end(`data: ${JSON.stringify({ error: { message: "upstream exploded mid-stream", type: "upstream_error", code: "upstream_error" } })}\n\n`);
        return;
      }
      if (body.model === "hold") await held;
      response.write(chunk({ content: "lo" }));
      response.write(chunk({}, "stop"));
      response.write(
        `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "openai/gpt-4o-mini", choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\n`,
      );
      response.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    bodies,
    release: () => release(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let gateway: Gateway;
test.before(async () => {
  gateway = await startGateway();
});
test.after.always(async () => {
  gateway.release();
  await gateway.close();
  removeTempHomes();
});

const env = () => ({ GW_BASE_URL: gateway.url, GW_API_KEY: API_KEY, GW_HOME: tempHome() });

test("gw models prints a table, or exactly the body with --json", async (t) => {
  const [table, body] = await Promise.all([gw(["models"], { env: env() }), gw(["models", "--json"], { env: env() })]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^ID\s+NAME\s+CONTEXT\s+MODALITIES$/m);
  t.regex(table.stdout, /^openai\/gpt-4o-mini\s+GPT-4o mini\s+128,000\s+text,image -> text$/m);
  t.is(body.code, 0, body.stderr);
  t.deepEqual(json(body), MODELS);
});

test("endpoint commands fail with the server's message, or a clear one when there is no key or no server", async (t) => {
  const [badKey, noKey, noServer] = await Promise.all([
    gw(["models", "--json"], { env: { ...env(), GW_API_KEY: "gw_wrong" } }),
    gw(["chat", "hi"], { env: { ...env(), GW_API_KEY: undefined } }),
    gw(["models"], { env: { ...env(), GW_BASE_URL: "http://127.0.0.1:9" } }),
  ]);
  t.is(badKey.code, 1);
  t.is(badKey.stdout, "");
  t.is(badKey.stderr.trim(), "Invalid API key provided.");
  t.is(noKey.code, 1);
  t.regex(noKey.stderr, /GW_API_KEY/);
  t.is(noServer.code, 1);
  t.regex(noServer.stderr, /cannot reach the gateway at http:\/\/127\.0\.0\.1:9/);
});

test("gw chat streams deltas to stdout as they arrive", async (t) => {
  const bin = fileURLToPath(new URL("../bin/run.js", import.meta.url));
  const child = spawn(process.execPath, [bin, "chat", "say hello", "--model", "hold"], {
    env: { ...process.env, NODE_ENV: undefined, ...env() },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let sawFirstDelta = false;
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  child.stdout.on("data", (data: Buffer) => {
    stdout += data.toString();
    // The server holds the rest of the stream until the first delta is on our screen: a CLI that
    // buffered its output would never get here, and the test would time out.
    if (!sawFirstDelta && stdout.includes("Hel")) {
      sawFirstDelta = true;
      t.is(stdout, "Hel");
      gateway.release();
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  t.is(code, 0, stderr);
  t.true(sawFirstDelta);
  t.is(stdout, "Hello\n");
  const sent = gateway.bodies.find((body) => body.model === "hold");
  t.like(sent, { stream: true, messages: [{ role: "user", content: "say hello" }] });
});

test("gw chat --json prints exactly the completion; - reads the prompt from stdin; --no-stream prints the text", async (t) => {
  const [asJson, fromStdin] = await Promise.all([
    gw(["chat", "json please", "--system", "be brief", "--temperature", "0.5", "--max-tokens", "64", "--json"], { env: env() }),
    gw(["chat", "-", "--no-stream", "--model", "openai/gpt-4o-mini"], { env: env(), input: "from stdin\n" }),
  ]);
  t.is(asJson.code, 0, asJson.stderr);
  t.like(json(asJson), { object: "chat.completion", choices: [{ message: { content: "Hello there" } }], usage: { total_tokens: 5 } });
  t.like(
    gateway.bodies.find((body) => JSON.stringify(body).includes("json please")),
    {
      model: "auto",
      stream: false,
      temperature: 0.5,
      max_tokens: 64,
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "json please" },
      ],
    },
  );
  t.is(fromStdin.code, 0, fromStdin.stderr);
  t.is(fromStdin.stdout, "Hello there\n");
  t.like(
    gateway.bodies.find((body) => JSON.stringify(body).includes("from stdin")),
    { model: "openai/gpt-4o-mini", stream: false, messages: [{ role: "user", content: "from stdin" }] },
  );
});

test("gw chat errors: the server's message on stderr, exit 1, also mid-stream and under --json", async (t) => {
  const [missing, missingJson, broken] = await Promise.all([
    gw(["chat", "hi", "--model", "missing"], { env: env() }),
    gw(["chat", "hi", "--model", "missing", "--json"], { env: env() }),
    gw(["chat", "hi", "--model", "boom"], { env: env() }),
  ]);
  for (const result of [missing, missingJson]) {
    t.is(result.code, 1);
    t.is(result.stderr.trim(), "The model `missing` does not exist.");
  }
  t.is(missing.stdout, "");
  t.is(missingJson.stdout, "");
  t.is(broken.code, 1);
  t.is(broken.stdout, "Hel\n", "what arrived before the error is kept");
  t.is(broken.stderr.trim(), "upstream exploded mid-stream");
});

test("without GW_BASE_URL the address comes from the home's server.host and server.port", async (t) => {
  const home = tempHome();
  await initHome(home);
  await editConfig(homePaths(home).config, (raw) => {
    raw.server = { host: "127.0.0.1", port: gateway.port, publicUrl: null };
  });
  const result = await gw(["models", "--json"], { home, env: { GW_API_KEY: API_KEY } });
  t.is(result.code, 0, result.stderr);
  t.deepEqual(json(result), MODELS);
});
