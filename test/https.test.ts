import { X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect } from "node:tls";
import test from "ava";
import { generate } from "selfsigned";
import { Agent, request } from "undici";
import { homePaths } from "../src/config/paths.js";
import type { ServerLogger } from "../src/server/server-logger.js";
import { startServer } from "../src/server/start-server.js";
import { selfSignedPair } from "../src/server/tls-self-signed.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, gw, json, makeHome, type ServeProcess, spawnServe } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

let fake: FakeOpenAI;
test.before(async () => {
  fake = await startFakeOpenAI();
});
test.after.always(async () => {
  await fake?.close();
});

const homeWithFake = () =>
  makeHome((config) => {
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "x" } };
    config.routes = [{ prefix: "fake/", provider: "fake" }];
  });

const FINGERPRINT = /SHA-256 fingerprint ((?:[0-9A-F]{2}:){31}[0-9A-F]{2})/g;

/** The SHA-256 fingerprint of the certificate a new connection is served. */
function servedFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? "";
      socket.end();
      resolve(fingerprint);
    });
    socket.once("error", reject);
  });
}

/** A client that trusts exactly this certificate (verification on, host name checked). */
const trusting = (cert: string | Buffer) => new Agent({ connect: { ca: cert } });

function recordingLogger(): ServerLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (message) => lines.push(`info ${message}`),
    warn: (message) => lines.push(`warn ${message}`),
    error: (error) => lines.push(`error ${String(error)}`),
    access: () => undefined,
  };
}

async function makePair(names: { dns?: string[]; ips?: string[] } = { ips: ["127.0.0.1"] }) {
  const pems = await generate([{ name: "commonName", value: "test" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: false },
      {
        name: "subjectAltName",
        altNames: [...(names.dns ?? []).map((value) => ({ type: 2 as const, value })), ...(names.ips ?? []).map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private, fingerprint256: new X509Certificate(pems.cert).fingerprint256 };
}

/** `gw serve --port 0 ...` over TLS on 127.0.0.1; resolves on its `listening on https://...` line. */
async function spawnServeProcess(home: string, args: string[]): Promise<ServeProcess> {
  const serve = await spawnServe(home, ["--host", "127.0.0.1", ...args]);
  if (!serve.url.startsWith("https://")) throw new Error(`not listening over TLS: ${serve.url}`);
  return serve;
}

/** The fingerprints logged on stderr so far (JSON lines are flushed within 100 ms). */
const loggedFingerprints = (serve: ServeProcess) => [...serve.stderr().matchAll(FINGERPRINT)].map((match) => match[1]!);

async function stop(serve: ServeProcess): Promise<number | null> {
  serve.child.kill("SIGTERM");
  return serve.exited;
}

test("gw serve --https: the logged fingerprint is the one served; a key works over TLS; the CLI trusts it via NODE_EXTRA_CA_CERTS; a restart keeps it", async (t) => {
  const home = await homeWithFake();
  const key = await addKey(home, "tls", "pro");
  const paths = homePaths(home);
  const serve = await spawnServeProcess(home, ["--https"]);
  await eventually(() => loggedFingerprints(serve).length > 0, "the fingerprint line");
  const logged = loggedFingerprints(serve)[0]!;
  t.is(await servedFingerprint(serve.url), logged);
  const cert = readFileSync(paths.tlsCert);
  t.is(new X509Certificate(cert).fingerprint256, logged, "the certificate kept in the home");
  t.is(statSync(paths.tlsKey).mode & 0o777, 0o600, "the key is readable by its owner only");

  const models = await request(`${serve.url}/v1/models`, { headers: { authorization: `Bearer ${key}` }, dispatcher: trusting(cert) });
  t.is(models.statusCode, 200);
  t.true(Array.isArray(((await models.body.json()) as { data: unknown[] }).data));

  const env = { GW_BASE_URL: serve.url, GW_API_KEY: key };
  const trusted = await gw(["models", "--json"], { home, env: { ...env, NODE_EXTRA_CA_CERTS: paths.tlsCert } });
  t.is(trusted.code, 0, trusted.stderr);
  t.true(Array.isArray(json<{ data: unknown[] }>(trusted).data));
  const untrusted = await gw(["models", "--json"], { home, env });
  t.not(untrusted.code, 0);
  t.regex(untrusted.stderr, /certificate/i);
  t.regex(untrusted.stderr, /NODE_EXTRA_CA_CERTS/);

  const doctor = await gw(["doctor", "--json"], { home });
  const tlsCheck = json<{ checks: Array<{ name: string; status: string; detail: string }> }>(doctor).checks.find((check) => check.name === "tls");
  t.is(tlsCheck?.status, "ok");
  t.true(tlsCheck?.detail.includes(logged), tlsCheck?.detail);

  t.is(await stop(serve), 0);
  const again = await spawnServeProcess(home, ["--https"]);
  await eventually(() => loggedFingerprints(again).length > 0, "the fingerprint line");
  t.deepEqual(loggedFingerprints(again), [logged]);
  t.is(await servedFingerprint(again.url), logged);
  t.is(await stop(again), 0);
});

test("gw serve --https: SIGTERM lets an open stream finish over TLS, then exits 0", async (t) => {
  const home = await homeWithFake();
  const key = await addKey(home, "drain", "pro");
  const serve = await spawnServeProcess(home, ["--https"]);
  fake.enqueue({ chunkDelayMs: 150 });
  const response = await request(`${serve.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "fake/x", stream: true, messages: [{ role: "user", content: "one two three four five" }] }),
    dispatcher: trusting(readFileSync(homePaths(home).tlsCert)),
  });
  t.is(response.statusCode, 200);
  serve.child.kill("SIGTERM");
  const text = await response.body.text();
  t.true(text.trimEnd().endsWith("data: [DONE]"), "the in-flight stream finished");
  t.is(await serve.exited, 0);
  await t.throwsAsync(servedFingerprint(serve.url), undefined, "no longer accepting");
});

test("gw serve --tls-cert --tls-key: renewed files are served to new connections; garbage or a mismatched key keeps the served pair", async (t) => {
  const home = await homeWithFake();
  const key = await addKey(home, "files", "pro");
  const dir = tempDir("gw-tls-");
  const certFile = path.join(dir, "fullchain.pem");
  const keyFile = path.join(dir, "privkey.pem");
  const [first, second] = await Promise.all([makePair(), makePair()]);
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  const serve = await spawnServeProcess(home, ["--tls-cert", certFile, "--tls-key", keyFile]);
  t.is(await servedFingerprint(serve.url), first.fingerprint256);
  await eventually(() => loggedFingerprints(serve).includes(first.fingerprint256), "the fingerprint line");
  t.false(readFileSync(homePaths(home).config, "utf8").includes("BEGIN"), "nothing of the files is copied into the home");

  // A renewal (written in place, key then certificate, as a copy would).
  writeFileSync(keyFile, second.key);
  writeFileSync(certFile, second.cert);
  await eventually(async () => (await servedFingerprint(serve.url)) === second.fingerprint256, "the renewed certificate");
  const models = await request(`${serve.url}/v1/models`, { headers: { authorization: `Bearer ${key}` }, dispatcher: trusting(second.cert) });
  t.is(models.statusCode, 200);
  await models.body.dump();

  // Garbage in place of the certificate: a warning, and the renewed pair still served. (Counted:
  // a poll may have caught the renewal half-written and warned already.)
  const count = (pattern: RegExp) => serve.stderr().match(pattern)?.length ?? 0;
  const garbageWarnings = count(/is not a PEM certificate/g);
  writeFileSync(certFile, "-----BEGIN CERTIFICATE-----\nnot base64\n");
  await eventually(() => count(/is not a PEM certificate/g) > garbageWarnings, "the warning about the garbage");
  t.is(await servedFingerprint(serve.url), second.fingerprint256);

  // A certificate with someone else's key.
  const mismatchWarnings = count(/is not the private key of the certificate/g);
  writeFileSync(certFile, first.cert);
  await eventually(() => count(/is not the private key of the certificate/g) > mismatchWarnings, "the warning about the mismatch");
  t.is(await servedFingerprint(serve.url), second.fingerprint256);
  t.regex(serve.stderr(), new RegExp(`still serving the certificate with SHA-256 fingerprint ${second.fingerprint256}`));
  t.is(await stop(serve), 0);
});

test("gw serve refuses unusable TLS flags and files with one clear line", async (t) => {
  const home = await homeWithFake();
  const dir = tempDir("gw-tls-");
  const [one, other] = await Promise.all([makePair(), makePair()]);
  writeFileSync(path.join(dir, "cert.pem"), one.cert);
  writeFileSync(path.join(dir, "other-key.pem"), other.key);
  const serve = (args: string[]) => gw(["serve", "--port", "0", ...args], { home });
  const [certOnly, keyOnly, missing, mismatched, garbage] = await Promise.all([
    serve(["--tls-cert", path.join(dir, "cert.pem")]),
    serve(["--https", "--tls-key", path.join(dir, "other-key.pem")]),
    serve(["--tls-cert", path.join(dir, "nope.pem"), "--tls-key", path.join(dir, "other-key.pem")]),
    serve(["--tls-cert", path.join(dir, "cert.pem"), "--tls-key", path.join(dir, "other-key.pem")]),
    serve(["--tls-cert", path.join(dir, "other-key.pem"), "--tls-key", path.join(dir, "other-key.pem")]),
  ]);
  for (const result of [certOnly, keyOnly]) {
    t.is(result.code, 2);
    t.is(result.stdout, "");
    t.regex(result.stderr, /^gw serve: --tls-cert and --tls-key go together/);
  }
  for (const result of [missing, mismatched, garbage]) {
    t.is(result.code, 1);
    t.is(result.stdout, "", "no listening line");
  }
  t.regex(missing.stderr, /gw serve: cannot read the TLS certificate .*nope\.pem: no such file/);
  t.regex(mismatched.stderr, /gw serve: .*other-key\.pem is not the private key of the certificate in .*cert\.pem/);
  t.regex(garbage.stderr, /gw serve: .*other-key\.pem is not a PEM certificate/);
});

test("in process: the self-signed certificate names the host, is trusted by a client holding it, and is replaced once expired", async (t) => {
  const home = await homeWithFake();
  const key = await addKey(home, "inproc", "pro");
  const logger = recordingLogger();
  const server = await startServer({ home, host: "127.0.0.1", port: 0, logger, tls: { selfSigned: true } });
  t.teardown(() => server.shutdown());
  t.regex(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const cert = readFileSync(homePaths(home).tlsCert);
  const x509 = new X509Certificate(cert);
  for (const name of ["localhost", os.hostname().toLowerCase()]) t.is(x509.checkHost(name), name);
  for (const ip of ["127.0.0.1", "::1"]) t.truthy(x509.checkIP(ip), ip);
  t.false(x509.ca, "not a CA: trusting it trusts this server only");
  const days = (new Date(x509.validTo).getTime() - Date.now()) / 86_400_000;
  t.true(days > 820 && days <= 825, `${days} days`);
  t.true(logger.lines.some((line) => line.startsWith("info made a self-signed TLS certificate")));
  t.true(logger.lines.some((line) => line.includes(`SHA-256 fingerprint ${x509.fingerprint256}`)));
  const models = await request(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` }, dispatcher: trusting(cert) });
  t.is(models.statusCode, 200);
  await models.body.dump();
  await server.shutdown();

  // 900 days on, the kept certificate has expired: a new one is made, and served.
  const later = recordingLogger();
  const laterServer = await startServer({
    home,
    host: "127.0.0.1",
    port: 0,
    logger: later,
    now: () => Date.now() + 900 * 86_400_000,
    tls: { selfSigned: true },
  });
  t.teardown(() => laterServer.shutdown());
  const renewed = new X509Certificate(readFileSync(homePaths(home).tlsCert));
  t.not(renewed.fingerprint256, x509.fingerprint256);
  t.is(await servedFingerprint(laterServer.url), renewed.fingerprint256);
  t.true(later.lines.some((line) => line.includes("the kept one expired on")));
});

test("in process: a --host the kept certificate does not name gets a new one naming it and the earlier names", async (t) => {
  const home = await makeHome();
  const paths = homePaths(home);
  const now = new Date();
  const named = await selfSignedPair(paths, "gw.example.lan", now);
  t.is(named.madeBecause, "there was none");
  t.is(named.pair.x509.checkHost("gw.example.lan"), "gw.example.lan");

  const reused = await selfSignedPair(paths, "127.0.0.1", now);
  t.is(reused.madeBecause, null);
  t.is(reused.pair.fingerprint256, named.pair.fingerprint256);

  const widened = await selfSignedPair(paths, "10.1.2.3", now);
  t.is(widened.madeBecause, "the kept one does not name 10.1.2.3");
  t.truthy(widened.pair.x509.checkIP("10.1.2.3"));
  t.is(widened.pair.x509.checkHost("gw.example.lan"), "gw.example.lan", "the earlier --host is still named");

  // A key that no longer matches (a crash between the two writes) is replaced, not served.
  writeFileSync(paths.tlsKey, (await makePair()).key);
  const repaired = await selfSignedPair(paths, "127.0.0.1", now);
  t.regex(repaired.madeBecause ?? "", /the kept one is unusable: .* is not the private key/);
  t.is(statSync(paths.tlsKey).mode & 0o777, 0o600);
});

test("in process: given files, a renewal is served and a refused pair keeps the served one, with a warning naming its fingerprint", async (t) => {
  const home = await homeWithFake();
  const dir = tempDir("gw-tls-");
  const certFile = path.join(dir, "cert.pem");
  const keyFile = path.join(dir, "key.pem");
  const [first, second] = await Promise.all([makePair({ dns: ["localhost"], ips: ["127.0.0.1"] }), makePair()]);
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  const logger = recordingLogger();
  const server = await startServer({ home, host: "127.0.0.1", port: 0, logger, tls: { certFile, keyFile, reloadIntervalMs: 20 } });
  t.teardown(() => server.shutdown());
  t.is(await servedFingerprint(server.url), first.fingerprint256);

  writeFileSync(keyFile, second.key);
  await eventually(() => logger.lines.some((line) => line.startsWith("warn ")), "the warning about the half-renewed pair");
  t.true(logger.lines.some((line) => line.includes(`still serving the certificate with SHA-256 fingerprint ${first.fingerprint256}`)));
  t.is(await servedFingerprint(server.url), first.fingerprint256);

  writeFileSync(certFile, second.cert);
  await eventually(async () => (await servedFingerprint(server.url)) === second.fingerprint256, "the renewal");
  t.true(logger.lines.some((line) => line.includes(`reloaded certificate ${certFile}: SHA-256 fingerprint ${second.fingerprint256}`)));
});

test("in process: certbot's layout, live/ symlinks switched to a renewal's new archive files, is served without a restart", async (t) => {
  const home = await homeWithFake();
  const dir = tempDir("gw-tls-");
  mkdirSync(path.join(dir, "archive"));
  mkdirSync(path.join(dir, "live"));
  const [first, second] = await Promise.all([makePair(), makePair()]);
  const issue = (n: number, pair: { cert: string; key: string }) => {
    writeFileSync(path.join(dir, "archive", `fullchain${n}.pem`), pair.cert);
    writeFileSync(path.join(dir, "archive", `privkey${n}.pem`), pair.key, { mode: 0o600 });
    for (const name of ["fullchain", "privkey"]) {
      const link = path.join(dir, "live", `${name}.pem`);
      symlinkSync(path.join("..", "archive", `${name}${n}.pem`), `${link}.new`);
      renameSync(`${link}.new`, link);
    }
  };
  issue(1, first);
  const server = await startServer({
    home,
    host: "127.0.0.1",
    port: 0,
    logger: recordingLogger(),
    tls: { certFile: path.join(dir, "live", "fullchain.pem"), keyFile: path.join(dir, "live", "privkey.pem"), reloadIntervalMs: 20 },
  });
  t.teardown(() => server.shutdown());
  t.is(await servedFingerprint(server.url), first.fingerprint256);
  issue(2, second);
  await eventually(async () => (await servedFingerprint(server.url)) === second.fingerprint256, "the renewal");
  const served = await request(`${server.url}/health`, { dispatcher: trusting(second.cert) });
  t.is(served.statusCode, 200);
  await served.body.dump();
});
