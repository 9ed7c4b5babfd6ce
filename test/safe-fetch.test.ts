// safeFetch against two servers on 127.0.0.1: an "internal" one that no refused URL may ever
// reach (its connection and request counters must stay zero), and a "public" one that tests reach
// only through fake public addresses. DNS is simulated with an injected resolver, and the test-only
// connect hook sends the socket for a fake public address to the public server and the socket for
// ANY other address to the internal server, so a policy bug shows up as a counted hit and no test
// can send a packet anywhere but 127.0.0.1.
import http from "node:http";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import test from "ava";
import { type AddressClass, checkAddress } from "../src/net/ip-policy.js";
import {
  FetchFailedError,
  type HostResolver,
  type ResolvedAddress,
  type SafeFetchOptions,
  safeFetch,
  UrlNotAllowedError,
  type UrlRefusal,
} from "../src/net/safe-fetch.js";

interface CountingServer {
  port: number;
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

async function listen(server: http.Server | tls.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function startServer(handler: http.RequestListener): Promise<CountingServer> {
  const server = http.createServer(handler);
  const state: CountingServer = {
    port: 0,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on("connection", () => (state.connections += 1));
  server.on("request", (request: http.IncomingMessage) => state.requests.push(request.url ?? ""));
  state.port = await listen(server);
  return state;
}

const PNG_BYTES = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
const PUBLIC_V4 = "93.184.215.14";
const PUBLIC_V6 = "2606:4700::1111";
const PUBLIC_TLS = "93.184.215.15";

let internal: CountingServer;
let publicServer: CountingServer;
let tlsServer: tls.Server;
let tlsPort = 0;
const tlsServernames: string[] = [];

test.before(async () => {
  internal = await startServer((_request, response) => {
    response.end("internal secret");
  });
  publicServer = await startServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://public.test");
    switch (url.pathname) {
      case "/ok":
        response.writeHead(200, { "content-type": "image/png" });
        response.end(PNG_BYTES);
        return;
      case "/host":
        response.writeHead(200, { "content-type": "text/plain" });
        response.end(request.headers.host ?? "");
        return;
      case "/redirect":
        response.writeHead(Number(url.searchParams.get("status") ?? 302), { location: url.searchParams.get("to") ?? "/ok" });
        response.end("moved");
        return;
      case "/loop":
        response.writeHead(302, { location: "/loop" });
        response.end();
        return;
      case "/big-length":
        response.writeHead(200, { "content-length": "5000" });
        response.end(Buffer.alloc(5000, 1));
        return;
      case "/big-chunked":
        response.writeHead(200, { "content-type": "application/octet-stream" });
        for (let index = 0; index < 10; index += 1) response.write(Buffer.alloc(500, 2));
        response.end();
        return;
      case "/exact":
        response.writeHead(200);
        response.end(Buffer.alloc(1000, 3));
        return;
      case "/slow":
        return; // never answers
      case "/slow-body":
        response.writeHead(200, { "content-type": "image/png" });
        response.write(PNG_BYTES);
        return; // never ends
      case "/status":
        response.writeHead(Number(url.searchParams.get("code") ?? 500));
        response.end("nope");
        return;
      default:
        response.writeHead(404);
        response.end();
    }
  });
  tlsServer = tls.createServer({
    key: TEST_KEY,
    cert: TEST_CERT,
    SNICallback: (servername, callback) => {
      tlsServernames.push(servername);
      callback(null, tls.createSecureContext({ key: TEST_KEY, cert: TEST_CERT }));
    },
  });
  tlsServer.on("secureConnection", (socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
  tlsServer.on("tlsClientError", () => undefined);
  tlsPort = await listen(tlsServer);
});

test.after.always(async () => {
  await internal.close();
  await publicServer.close();
  await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
});

/** A fake DNS: known names answer, anything else fails like NXDOMAIN. Records every lookup. */
function fakeDns(table: Record<string, string[] | (() => string[])>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const entry = table[hostname];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    const addresses = typeof entry === "function" ? entry() : entry;
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

const dns = fakeDns({
  "public.test": [PUBLIC_V4],
  "public6.test": [PUBLIC_V6],
  "secure.test": [PUBLIC_TLS],
  "internal.test": ["10.0.0.5"],
  "loopback.test": ["127.0.0.1"],
  "metadata.test": ["169.254.169.254"],
  "mixed.test": [PUBLIC_V4, "192.168.1.10"],
  "mixed-first.test": ["fd12::1", PUBLIC_V4],
  "mapped.test": ["::ffff:127.0.0.1"],
});

const connectedTo: string[] = [];

function options(overrides: Partial<SafeFetchOptions> = {}): SafeFetchOptions {
  return {
    maxBytes: 1000,
    timeoutMs: 5000, // generous: tests run beside sharp-heavy ones on two cores
    resolve: dns,
    unsafeConnectRedirect: ({ address }) => {
      connectedTo.push(address);
      if (address === PUBLIC_V4 || address === PUBLIC_V6) return { address: "127.0.0.1", port: publicServer.port };
      if (address === PUBLIC_TLS) return { address: "127.0.0.1", port: tlsPort };
      return { address: "127.0.0.1", port: internal.port }; // a trap: counted, never leaves the machine
    },
    ...overrides,
  };
}

function assertInternalUntouched(t: { is(actual: unknown, expected: unknown, message?: string): void }): void {
  t.is(internal.connections, 0, "the internal server was connected to");
  t.is(internal.requests.length, 0, "the internal server was sent a request");
}

// ---- the address policy on its own --------------------------------------------------------------

test("the policy allows public unicast and refuses every special range", (t) => {
  for (const address of ["8.8.8.8", "93.184.215.14", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]) {
    t.true(checkAddress(address).allowed, address);
  }
  const refused: Record<string, AddressClass> = {
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "10.1.2.3": "private",
    "172.16.0.1": "private",
    "172.31.255.255": "private",
    "192.168.0.1": "private",
    "169.254.1.1": "link_local",
    "100.64.0.1": "shared",
    "0.0.0.0": "unspecified",
    "0.1.2.3": "unspecified",
    "255.255.255.255": "multicast",
    "224.0.0.1": "multicast",
    "192.0.2.1": "reserved",
    "198.51.100.1": "reserved",
    "203.0.113.1": "reserved",
    "198.18.0.1": "reserved",
    "240.0.0.1": "reserved",
    "169.254.169.254": "metadata",
    "100.100.100.200": "metadata",
    "168.63.129.16": "metadata",
    "192.0.0.192": "metadata",
    "fd00:ec2::254": "metadata",
    "::1": "loopback",
    "::": "unspecified",
    "fe80::1": "link_local",
    "fe80::1%eth0": "link_local",
    "fc00::1": "private",
    "fd12:3456::1": "private",
    "ff02::1": "multicast",
    "2001:db8::1": "reserved",
    "100::1": "reserved",
    "2001::1": "reserved", // Teredo
    "64:ff9b:1::808:808": "reserved", // local-use NAT64
    "::808:808": "reserved", // IPv4-compatible ::8.8.8.8, deprecated
    "::ffff:127.0.0.1": "loopback",
    "::ffff:7f00:1": "loopback",
    "::ffff:10.0.0.1": "private",
    "::ffff:169.254.169.254": "metadata",
    "::127.0.0.1": "loopback",
    "64:ff9b::7f00:1": "loopback",
    "64:ff9b::a9fe:a9fe": "metadata",
    "2002:7f00:1::": "loopback", // 6to4 around 127.0.0.1
    "2002:c0a8:101::1": "private", // 6to4 around 192.168.1.1
    "0x7f.1": "loopback",
    "2130706433": "loopback",
    "0177.0.0.1": "loopback",
    "not-an-address": "invalid",
  };
  for (const [address, addressClass] of Object.entries(refused)) {
    t.deepEqual(checkAddress(address), { allowed: false, addressClass }, address);
  }
});

// ---- refused before any connection --------------------------------------------------------------

const loopbackNotations = (port: number): string[] => [
  `http://127.0.0.1:${port}/`,
  `http://2130706433:${port}/`,
  `http://0177.0.0.1:${port}/`,
  `http://017700000001:${port}/`,
  `http://0x7f.1:${port}/`,
  `http://0x7f000001:${port}/`,
  `http://127.1:${port}/`,
  `http://127.0.0.1.:${port}/`,
  `http://[::1]:${port}/`,
  `http://[::ffff:127.0.0.1]:${port}/`,
  `http://[::ffff:7f00:1]:${port}/`,
  `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
  `http://[::127.0.0.1]:${port}/`,
  `http://[64:ff9b::127.0.0.1]:${port}/`,
  `http://[2002:7f00:1::]:${port}/`,
  `http://0.0.0.0:${port}/`,
  `http://0:${port}/`,
  `http://[::]:${port}/`,
  `HTTP://127.0.0.1:${port}/`,
  `https://127.0.0.1:${port}/`,
];

test("loopback URLs in every notation are refused without a connection", async (t) => {
  for (const url of loopbackNotations(internal.port)) {
    const error = await t.throwsAsync(safeFetch(url, options()), { instanceOf: UrlNotAllowedError }, url);
    t.true(["loopback", "unspecified"].includes(error?.reason ?? ""), `${url}: ${error?.reason}`);
    t.regex(error?.message ?? "", /^the URL points to an? (loopback|unspecified) address$/);
  }
  assertInternalUntouched(t);
});

test("private, link-local, shared and metadata address literals are refused", async (t) => {
  const cases: Array<[string, UrlRefusal]> = [
    ["http://10.0.0.1/", "private"],
    ["http://172.16.5.4/", "private"],
    ["http://192.168.1.1/", "private"],
    ["http://169.254.169.254/latest/meta-data/", "metadata"],
    ["http://[fd00:ec2::254]/latest/meta-data/", "metadata"],
    ["http://100.100.100.200/latest/meta-data/", "metadata"],
    ["http://169.254.10.10/", "link_local"],
    ["http://[fe80::1]/", "link_local"],
    ["http://100.64.1.1/", "shared"],
    ["http://[fd12::1]/", "private"],
    ["http://224.0.0.1/", "multicast"],
    ["http://255.255.255.255/", "multicast"],
    ["http://192.0.2.10/", "reserved"],
    ["http://[2001:db8::1]/", "reserved"],
    ["http://[::ffff:a9fe:a9fe]/", "metadata"],
  ];
  for (const [url, reason] of cases) {
    const error = await t.throwsAsync(safeFetch(url, options()), { instanceOf: UrlNotAllowedError }, url);
    t.is(error?.reason, reason, url);
  }
  assertInternalUntouched(t);
  t.deepEqual(
    connectedTo.filter((address) => !address.startsWith("93.") && !address.startsWith("2606:")),
    [],
  );
});

test("an IPv6 zone id is refused as an invalid URL", async (t) => {
  const error = await t.throwsAsync(safeFetch("http://[fe80::1%25eth0]/", options()), { instanceOf: UrlNotAllowedError });
  t.is(error?.reason, "invalid_url");
});

test("hostnames resolving to internal addresses are refused", async (t) => {
  const cases: Array<[string, UrlRefusal, string]> = [
    ["loopback.test", "loopback", "the URL's host resolves to a loopback address"],
    ["internal.test", "private", "the URL's host resolves to a private address"],
    ["metadata.test", "metadata", "the URL's host resolves to a cloud metadata address"],
    ["mapped.test", "loopback", "the URL's host resolves to a loopback address"],
    ["mixed.test", "private", "the URL's host resolves to a private address"],
    ["mixed-first.test", "private", "the URL's host resolves to a private address"],
  ];
  for (const [host, reason, message] of cases) {
    const error = await t.throwsAsync(safeFetch(`http://${host}:${internal.port}/ok`, options()), {
      instanceOf: UrlNotAllowedError,
    });
    t.is(error?.reason, reason, host);
    t.is(error?.message, message, host);
  }
  assertInternalUntouched(t);
  t.is(publicServer.requests.filter((path) => path === "/ok").length, 0, "the public half of a mixed answer was used");
});

test("localhost through the system resolver is refused", async (t) => {
  const error = await t.throwsAsync(safeFetch(`http://localhost:${internal.port}/`, { maxBytes: 1000, timeoutMs: 2000 }), { instanceOf: UrlNotAllowedError });
  t.is(error?.reason, "loopback");
  assertInternalUntouched(t);
});

test("non-http schemes are refused", async (t) => {
  for (const url of [
    "file:///etc/passwd",
    "ftp://public.test/file",
    "data:image/png;base64,iVBORw0KGgo=",
    "gopher://public.test/",
    "javascript:alert(1)",
    "ws://public.test/",
  ]) {
    const error = await t.throwsAsync(safeFetch(url, options()), { instanceOf: UrlNotAllowedError }, url);
    t.is(error?.reason, "scheme", url);
    t.is(error?.message, "only http and https URLs can be fetched");
  }
  for (const url of ["not a url", "/relative/path", ""]) {
    const error = await t.throwsAsync(safeFetch(url, options()), { instanceOf: UrlNotAllowedError }, url);
    t.is(error?.reason, "invalid_url");
  }
});

test("URLs with userinfo are refused before any lookup", async (t) => {
  const resolver = fakeDns({ "public.test": [PUBLIC_V4] });
  for (const url of [
    "http://user:secret@public.test/ok",
    "http://user@public.test/ok",
    `http://admin:admin@127.0.0.1:${internal.port}/`,
    "https://:pw@public.test/ok",
  ]) {
    const error = await t.throwsAsync(safeFetch(url, options({ resolve: resolver })), { instanceOf: UrlNotAllowedError }, url);
    t.is(error?.reason, "userinfo", url);
    t.is(error?.message, "URLs with a user name or password are not allowed");
  }
  t.deepEqual(resolver.calls, []);
  assertInternalUntouched(t);
});

// ---- redirects ----------------------------------------------------------------------------------

test("a public URL redirecting to an internal one is refused at the redirect", async (t) => {
  const targets: Array<[string, UrlRefusal, RegExp]> = [
    [`http://127.0.0.1:${internal.port}/secret`, "loopback", /^the URL redirects to a loopback address$/],
    [`http://2130706433:${internal.port}/secret`, "loopback", /^the URL redirects to a loopback address$/],
    [`http://[::ffff:127.0.0.1]:${internal.port}/`, "loopback", /redirects to a loopback address/],
    ["http://169.254.169.254/latest/meta-data/iam/", "metadata", /redirects to a cloud metadata address/],
    [`http://internal.test:${internal.port}/`, "private", /^the URL redirects to a host that resolves to a private address$/],
    [`http://loopback.test:${internal.port}/`, "loopback", /redirects to a host that resolves to a loopback address/],
    ["file:///etc/passwd", "scheme", /redirects to a location that is not http or https/],
    ["http://user:pw@public.test/ok", "userinfo", /user name or password/],
  ];
  for (const status of [301, 302, 303, 307, 308]) {
    for (const [location, reason, message] of targets) {
      const url = `http://public.test/redirect?status=${status}&to=${encodeURIComponent(location)}`;
      const error = await t.throwsAsync(safeFetch(url, options()), { instanceOf: UrlNotAllowedError }, location);
      t.is(error?.reason, reason, location);
      t.regex(error?.message ?? "", message);
    }
  }
  t.true(publicServer.requests.some((path) => path.startsWith("/redirect")));
  assertInternalUntouched(t);
});

test("redirects between public locations are followed, relative ones too", async (t) => {
  const resource = await safeFetch(`http://public.test/redirect?to=${encodeURIComponent("http://public6.test/redirect?to=/ok")}`, options());
  t.deepEqual(resource.bytes, PNG_BYTES);
  t.is(resource.finalUrl, "http://public6.test/ok");
  t.is(resource.contentType, "image/png");
});

test("more than maxRedirects redirects fail", async (t) => {
  const error = await t.throwsAsync(safeFetch("http://public.test/loop", options()), { instanceOf: FetchFailedError });
  t.is(error?.reason, "too_many_redirects");
  t.is(error?.message, "the URL redirected more than 5 times");
  const zero = await t.throwsAsync(safeFetch("http://public.test/redirect?to=/ok", options({ maxRedirects: 0 })), {
    instanceOf: FetchFailedError,
  });
  t.is(zero?.reason, "too_many_redirects");
});

// ---- pinning ------------------------------------------------------------------------------------

test("a host is resolved once per hop and the socket goes to the vetted address (no rebinding)", async (t) => {
  let answers = 0;
  const rebinding = fakeDns({
    "rebind.test": () => (answers++ === 0 ? [PUBLIC_V4] : ["127.0.0.1"]),
  });
  const seen: string[] = [];
  const resource = await safeFetch("http://rebind.test/ok", {
    ...options({ resolve: rebinding }),
    unsafeConnectRedirect: ({ address, port }) => {
      seen.push(`${address}:${port}`);
      return address === PUBLIC_V4 ? { address: "127.0.0.1", port: publicServer.port } : { address: "127.0.0.1", port: internal.port };
    },
  });
  t.deepEqual(resource.bytes, PNG_BYTES);
  t.deepEqual(rebinding.calls, ["rebind.test"]);
  t.deepEqual(seen, [`${PUBLIC_V4}:80`]);

  // A redirect back to the same host is a new hop: resolved and checked again, and now refused.
  const error = await t.throwsAsync(safeFetch("http://rebind.test/redirect?to=/ok", options({ resolve: rebinding })), {
    instanceOf: UrlNotAllowedError,
  });
  t.is(error?.reason, "loopback");
  assertInternalUntouched(t);
});

test("the pinned connection keeps the URL's Host header and never asks the system resolver", async (t) => {
  // allowPrivate and no connect hook: the real connector dials the vetted 127.0.0.1 itself.
  // "pinned-host.test" does not exist in any real DNS, so success proves undici did no lookup.
  const resolver = fakeDns({ "pinned-host.test": ["127.0.0.1"] });
  const resource = await safeFetch(`http://pinned-host.test:${publicServer.port}/host`, {
    maxBytes: 1000,
    timeoutMs: 30_000, // generous: a slow answer on a loaded machine is not what this checks
    resolve: resolver,
    allowPrivate: true,
  });
  t.is(resource.bytes.toString(), `pinned-host.test:${publicServer.port}`);
  t.deepEqual(resolver.calls, ["pinned-host.test"]);
});

test("https keeps SNI and certificate checks on the URL's hostname", async (t) => {
  const error = await t.throwsAsync(safeFetch("https://secure.test/ok", options()), { instanceOf: FetchFailedError });
  t.is(error?.reason, "network");
  t.notRegex(error?.message ?? "", /127\.0\.0\.1|93\.184|self.signed|certificate/i);
  t.true(tlsServernames.includes("secure.test"), `SNI seen: ${tlsServernames.join(",")}`);
});

// ---- success, size and time ---------------------------------------------------------------------

test("a public URL is fetched with its bytes, content type and final URL", async (t) => {
  const resource = await safeFetch("http://public.test/ok", options({ accept: "image/*" }));
  t.deepEqual(resource.bytes, PNG_BYTES);
  t.is(resource.contentType, "image/png");
  t.is(resource.finalUrl, "http://public.test/ok");
  const six = await safeFetch("http://[2606:4700::1111]/ok", options());
  t.deepEqual(six.bytes, PNG_BYTES);
});

test("a body exactly at maxBytes is accepted", async (t) => {
  const resource = await safeFetch("http://public.test/exact", options({ maxBytes: 1000 }));
  t.is(resource.bytes.length, 1000);
});

test("bodies over maxBytes fail, by Content-Length and while streaming chunked", async (t) => {
  for (const path of ["/big-length", "/big-chunked"]) {
    const error = await t.throwsAsync(safeFetch(`http://public.test${path}`, options({ maxBytes: 1000 })), {
      instanceOf: FetchFailedError,
    });
    t.is(error?.reason, "too_large", path);
    t.is(error?.message, "the resource is larger than the 1000-byte limit");
  }
});

test("a fetch that takes too long fails with a timeout, redirects included", async (t) => {
  for (const url of ["http://public.test/slow", "http://public.test/slow-body", "http://public.test/redirect?to=/slow"]) {
    const error = await t.throwsAsync(safeFetch(url, options({ timeoutMs: 300 })), { instanceOf: FetchFailedError }, url);
    t.is(error?.reason, "timeout", url);
    t.is(error?.message, "fetching the URL took longer than 300 ms");
  }
});

test("a caller's abort is rethrown as its own reason", async (t) => {
  const controller = new AbortController();
  const reason = new Error("client went away");
  setTimeout(() => controller.abort(reason), 50);
  const error = await t.throwsAsync(safeFetch("http://public.test/slow", options({ signal: controller.signal })));
  t.is(error, reason);
});

test("non-2xx answers fail with their status", async (t) => {
  for (const code of [400, 403, 404, 500, 503]) {
    const error = await t.throwsAsync(safeFetch(`http://public.test/status?code=${code}`, options()), {
      instanceOf: FetchFailedError,
    });
    t.is(error?.reason, "http_status");
    t.is(error?.status, code);
    t.is(error?.message, `the URL answered HTTP ${code}`);
  }
});

test("an unresolvable host fails without naming the resolver's error", async (t) => {
  const error = await t.throwsAsync(safeFetch("http://nowhere.test/ok", options()), { instanceOf: FetchFailedError });
  t.is(error?.reason, "dns");
  t.is(error?.message, "the URL's host could not be resolved");
});

// A throwaway self-signed certificate for CN/SAN secure.test: the client must reject it.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQglVYNJ+0tjtwVYyNJ
LZH2zYM9SG+8vRfueyLoyiqykjqhRANCAATohU84dDEY45ngMycgJOk0FBr/bvgg
N5tTDaMfcbFa7hnnhXYhKqbnZtqZszneKSTg6vwiMlL43pRy+H/eh/0R
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUPqOqAioqEEY7OKSVUABk8dWI+k4wCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLc2VjdXJlLnRlc3QwIBcNMjYxMTIyMDkxNjI4WhgPMjEyNjEw
MjkwOTE2MjhaMBYxFDASBgNVBAMMC3NlY3VyZS50ZXN0MFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAE6IVPOHQxGOOZ4DMnICTpNBQa/274IDebUw2jH3GxWu4Z54V2
ISqm52bambM53ikk4Or8IjJS+N6Ucvh/3of9EaNrMGkwHQYDVR0OBBYEFICg4pQS
lzBF/9h0FyZk49w8Qtm1MB8GA1UdIwQYMBaAFICg4pQSlzBF/9h0FyZk49w8Qtm1
MA8GA1UdEwEB/wQFMAMBAf8wFgYDVR0RBA8wDYILc2VjdXJlLnRlc3QwCgYIKoZI
zj0EAwIDSAAwRQIhAPoJxKTFEv79mHUxk3lAIqxYODitOpDZecO4wqjJw0W+AiBd
6yMni9wTi5r7dYIwDxpKFLZgXU/0h96slYtJbpj26g==
-----END CERTIFICATE-----
`;
