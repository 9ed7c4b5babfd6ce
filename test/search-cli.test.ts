// `gw search` as a user runs it: subprocesses of the built CLI against a running gw whose search
// provider is the SearXNG fake. The numbered list (titles, addresses with their dates, snippets
// wrapped to 80 columns off a terminal, to $COLUMNS, to the terminal's own width under `script`);
// --json is the API body exactly; --max-results and a query from stdin reach the gateway; errors
// (an over-long query, a bad --max-results, a gateway with no search provider, every provider
// failing) exit non-zero with the server's own message.
import { spawn } from "node:child_process";
import test from "ava";
import { type FakeSearxng, type SearxngResultInput, startFakeSearxng } from "./fakes/searxng.js";
import { addKey, gw, gwBin, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const LONG_SNIPPET =
  "SQLite implements atomic commit and rollback with a rollback journal by default. Since version 3.7.0 a write-ahead log is " +
  "available instead: changes are appended to a separate WAL file, readers keep reading the original database while a writer " +
  "appends, and a checkpoint moves the pages back into the database file.";

const RESULTS: SearxngResultInput[] = [
  { title: "Write-Ahead Logging", url: "https://sqlite.test/wal.html", content: LONG_SNIPPET, publishedDate: "2025-12-31T23:00:00" },
  { title: "PRAGMA journal_mode", url: "https://sqlite.test/pragma.html#journal_mode", content: "Query or change the journal mode.", publishedDate: null },
  {
    title: "Atomic Commit In SQLite",
    url: "https://sqlite.test/atomiccommit.html",
    content: "How SQLite makes a transaction atomic.",
    publishedDate: "2024-02-29",
  },
];

/** What `gw search` prints for RESULTS at 80 columns, written out by hand. */
const EXPECTED_80 = `1. Write-Ahead Logging
   https://sqlite.test/wal.html · 2025-12-31
   SQLite implements atomic commit and rollback with a rollback journal by
   default. Since version 3.7.0 a write-ahead log is available instead: changes
   are appended to a separate WAL file, readers keep reading the original
   database while a writer appends, and a checkpoint moves the pages back into
   the database file.

2. PRAGMA journal_mode
   https://sqlite.test/pragma.html#journal_mode
   Query or change the journal mode.

3. Atomic Commit In SQLite
   https://sqlite.test/atomiccommit.html · 2024-02-29
   How SQLite makes a transaction atomic.
`;

let searxng: FakeSearxng;
let gateway: TestGateway;
let key: string;
const gateways: TestGateway[] = [];

test.before(async () => {
  searxng = await startFakeSearxng();
  const home = await makeHome((config) => {
    config.providers = { searxng: { type: "searxng", baseUrl: searxng.url, upstream: { retries: 0 } } };
    config.tools.search = { default: "searxng/web", allow: ["searxng/web"] };
  });
  key = await addKey(home, "reader", "pro");
  gateway = await startTestGateway(home);
  gateways.push(gateway);
});

test.beforeEach(() => {
  searxng.reset();
  searxng.set({ results: RESULTS });
});

test.after.always(async () => {
  for (const running of gateways) await running.shutdown();
  await searxng?.close();
});

/** The gateway and key of the test; COLUMNS unset unless a test sets it. */
const env = (extra: Record<string, string | undefined> = {}, target: TestGateway = gateway, apiKey = key) => ({
  GW_BASE_URL: target.url,
  GW_API_KEY: apiKey,
  COLUMNS: undefined,
  ...extra,
});

async function api(body: unknown, target: TestGateway = gateway, apiKey = key): Promise<{ status: number; body: any }> {
  const response = await fetch(`${target.url}/v1/search`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** The built gw inside a pseudo-terminal (util-linux `script`) `columns` wide; stderr merged in. */
function gwOnTerminal(args: string[], columns: number): Promise<{ code: number; output: string }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, GW_BASE_URL: gateway.url, GW_API_KEY: key };
  delete environment.NODE_ENV;
  delete environment.COLUMNS;
  const quoted = [process.execPath, gwBin, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  return new Promise((resolve) => {
    const child = spawn("script", ["-qec", `stty cols ${columns}; ${quoted}`, "/dev/null"], { env: environment, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("close", (code) => resolve({ code: code ?? -1, output: output.replaceAll("\r", "") }));
  });
}

/** The snippet lines of result `index` (1-based) in the printed list, joined back into one text. */
function snippetOf(stdout: string, index: number): string {
  const block = stdout.split("\n\n")[index - 1]!.split("\n");
  return block
    .slice(2)
    .map((line) => line.trim())
    .join(" ");
}

const longestLine = (text: string) => Math.max(...text.split("\n").map((line) => Array.from(line).length));

test.serial("a numbered list: title, address and date, the snippet wrapped to 80 columns off a terminal; the provider on stderr", async (t) => {
  const result = await gw(["search", "sqlite wal"], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, EXPECTED_80);
  t.true(longestLine(result.stdout) <= 80);
  t.is(result.stderr, "3 results from searxng\n");
  // The query reached SearXNG as typed.
  t.is(searxng.requests.length, 1);
  t.like(searxng.requests[0]!.query, { q: "sqlite wal", format: "json" });
});

test.serial("$COLUMNS sets the width: every line but the addresses fits, no word of the snippet is lost or split", async (t) => {
  const result = await gw(["search", "sqlite wal"], { env: env({ COLUMNS: "44" }) });
  t.is(result.code, 0, result.stderr);
  // Every line fits but the addresses, which are printed whole to be copied (the date after them).
  const addressLines = result.stdout.split("\n").filter((line) => line.startsWith("   https://"));
  t.is(addressLines.length, 3);
  t.true(
    longestLine(
      result.stdout
        .split("\n")
        .filter((line) => !addressLines.includes(line))
        .join("\n"),
    ) <= 44,
    result.stdout,
  );
  t.true(result.stdout.split("\n").length > EXPECTED_80.split("\n").length, "narrower means more lines");
  t.is(snippetOf(result.stdout, 1), LONG_SNIPPET);
  t.regex(result.stdout, /^1\. Write-Ahead Logging\n {3}https:\/\/sqlite\.test\/wal\.html · 2025-12-31\n/);
  t.regex(result.stdout, /\n\n2\. PRAGMA journal_mode\n {3}https:\/\/sqlite\.test\/pragma\.html#journal_mode\n {3}Query or change the journal mode\.\n\n3\. /);
});

test.serial("on a terminal the list is wrapped to the terminal's width", async (t) => {
  const result = await gwOnTerminal(["search", "sqlite wal"], 60);
  t.is(result.code, 0, result.output);
  const list = result.output.slice(result.output.indexOf("1. "));
  t.true(longestLine(list) <= 60, list);
  t.true(longestLine(list) > 50, "uses the room it has");
  t.is(snippetOf(list, 1), LONG_SNIPPET);
  t.true(result.output.includes("3 results from searxng"));
});

test.serial("long titles wrap under their number; long addresses are never cut; escape sequences from a page are dropped", async (t) => {
  const longUrl = `https://example.test/${"segment/".repeat(12)}page.html`;
  searxng.set({
    results: [
      {
        title: "A title long enough that it has to go over more than one line of the output at sixty",
        url: longUrl,
        content: "\u001b[31mred\u001b[0m text \u001b]0;owned\u0007here",
      },
    ],
  });
  const result = await gw(["search", "long"], { env: env({ COLUMNS: "60" }) });
  t.is(result.code, 0, result.stderr);
  t.is(
    result.stdout,
    `1. A title long enough that it has to go over more than one
   line of the output at sixty
   ${longUrl}
   red text here
`,
  );
  t.false(result.stdout.includes("\u001b"));
  t.is(result.stderr, "1 result from searxng\n");
});

test.serial("--json prints exactly the API body", async (t) => {
  const result = await gw(["search", "sqlite wal", "--json"], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.is(result.stderr, "");
  const direct = await api({ query: "sqlite wal" });
  t.is(direct.status, 200);
  t.deepEqual(json(result), direct.body);
  t.deepEqual(json<any>(result).data, {
    query: "sqlite wal",
    provider: "searxng",
    results: [
      { title: "Write-Ahead Logging", url: "https://sqlite.test/wal.html", snippet: LONG_SNIPPET, publishedDate: "2025-12-31" },
      { title: "PRAGMA journal_mode", url: "https://sqlite.test/pragma.html#journal_mode", snippet: "Query or change the journal mode." },
      {
        title: "Atomic Commit In SQLite",
        url: "https://sqlite.test/atomiccommit.html",
        snippet: "How SQLite makes a transaction atomic.",
        publishedDate: "2024-02-29",
      },
    ],
  });
  t.true(result.stdout.endsWith("}\n"));
});

test.serial("--max-results N: at most N results, numbered 1 to N; out of range is the server's 400", async (t) => {
  const two = await gw(["search", "sqlite wal", "--max-results", "2"], { env: env() });
  t.is(two.code, 0, two.stderr);
  t.is(two.stdout, EXPECTED_80.split("\n\n3. ")[0]!.concat("\n"));
  t.is(two.stderr, "2 results from searxng\n");
  const one = json<any>(await gw(["search", "sqlite wal", "--max-results", "1", "--json"], { env: env() }));
  t.is(one.data.results.length, 1);
  t.deepEqual(one, (await api({ query: "sqlite wal", max_results: 1 })).body);

  const before = searxng.requests.length;
  const tooMany = await gw(["search", "sqlite wal", "--max-results", "21"], { env: env() });
  const direct = await api({ query: "sqlite wal", max_results: 21 });
  t.is(direct.status, 400);
  t.not(tooMany.code, 0);
  t.is(tooMany.stdout, "");
  t.is(tooMany.stderr, `${direct.body.error.message}\n`);
  t.regex(tooMany.stderr, /max_results/);
  t.is(searxng.requests.length, before, "nothing was sent upstream");
});

test.serial("`-` reads the query from stdin, trimmed", async (t) => {
  const result = await gw(["search", "-", "--json"], { env: env(), input: "  rust async runtimes \n" });
  t.is(result.code, 0, result.stderr);
  t.is(json<any>(result).data.query, "rust async runtimes");
  t.is(searxng.requests.at(-1)!.query.q, "rust async runtimes");

  const listed = await gw(["search", "-"], { env: env(), input: "sqlite wal\n" });
  t.is(listed.code, 0, listed.stderr);
  t.is(listed.stdout, EXPECTED_80);

  const empty = await gw(["search", "-"], { env: env(), input: "  \n" });
  t.not(empty.code, 0);
  t.is(empty.stdout, "");
  t.regex(empty.stderr, /query is empty/);
});

test.serial("a query over 500 characters: the server's 400 message, a non-zero exit, nothing searched", async (t) => {
  const query = "q".repeat(501);
  const result = await gw(["search", query], { env: env() });
  const direct = await api({ query });
  t.is(direct.status, 400);
  t.not(result.code, 0);
  t.is(result.stdout, "");
  t.is(result.stderr, `${direct.body.error.message}\n`);
  t.regex(result.stderr, /500/);
  t.is(searxng.requests.length, 0);
  // 500 exactly is taken.
  t.is((await gw(["search", "q".repeat(500)], { env: env() })).code, 0);
});

test.serial("no results: a plain message, exit 0, nothing on stdout", async (t) => {
  searxng.set({ results: [] });
  const result = await gw(["search", "nothing matches this"], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, "");
  t.is(result.stderr, 'no results for "nothing matches this" (from searxng)\n');
  const asJson = await gw(["search", "nothing matches this", "--json"], { env: env() });
  t.deepEqual(json(asJson), { success: true, data: { query: "nothing matches this", provider: "searxng", results: [] } });
});

test.serial("every provider failing: the server's 502 message, non-zero", async (t) => {
  searxng.set({ status: 500 });
  const result = await gw(["search", "sqlite wal"], { env: env() });
  const direct = await api({ query: "sqlite wal" });
  t.is(direct.status, 502);
  t.not(result.code, 0);
  t.is(result.stdout, "");
  t.is(result.stderr, `${direct.body.error.message}\n`);
});

test.serial("a gateway with no search provider: the server's 503 message, non-zero; no key: told how to get one", async (t) => {
  const home = await makeHome();
  const bare = await startTestGateway(home);
  gateways.push(bare);
  const bareKey = await addKey(home, "reader", "pro");
  const result = await gw(["search", "sqlite wal"], { env: env({}, bare, bareKey) });
  const direct = await api({ query: "sqlite wal" }, bare, bareKey);
  t.is(direct.status, 503);
  t.is(direct.body.error.code, "search_not_configured");
  t.not(result.code, 0);
  t.is(result.stdout, "");
  t.is(result.stderr, `${direct.body.error.message}\n`);
  t.regex(result.stderr, /not configured/);

  const keyless = await gw(["search", "sqlite wal"], { env: { GW_BASE_URL: gateway.url } });
  t.not(keyless.code, 0);
  t.regex(keyless.stderr, /no API key/);
});
