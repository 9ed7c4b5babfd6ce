// `gw serve --https` without certificate files: a self-signed certificate made on first use and
// kept in the home (<home>/tls, the key mode 0600), so its fingerprint stays the same from one
// start to the next and a client can pin or trust it. A new one is made only when there is none
// usable: missing, unreadable, expired, or not naming the --host asked for (docs/decisions.md §13).
import { existsSync, mkdirSync } from "node:fs";
import { isIP } from "node:net";
import os from "node:os";
import { generate } from "selfsigned";
import type { HomePaths } from "../config/paths.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import { parseTlsPair, readTlsPair, type TlsPair } from "./tls-pair.js";

export type TlsPaths = Pick<HomePaths, "tlsDir" | "tlsCert" | "tlsKey">;

export interface SelfSignedResult {
  pair: TlsPair;
  /** Why a new certificate was made; null when the kept one was reused. */
  madeBecause: string | null;
}

const VALID_DAYS = 825;
const DAY_MS = 86_400_000;
/** Back-dated so a LAN client whose clock runs a little behind still accepts it. */
const BACKDATE_MS = 3_600_000;

export async function selfSignedPair(paths: TlsPaths, host: string, now: Date): Promise<SelfSignedResult> {
  let kept: TlsPair | null = null;
  let reason = "there was none";
  if (existsSync(paths.tlsCert) || existsSync(paths.tlsKey)) {
    try {
      kept = readTlsPair(paths.tlsCert, paths.tlsKey);
      const stale = staleness(kept, host, now);
      if (!stale) return { pair: kept, madeBecause: null };
      reason = stale;
    } catch (error) {
      reason = `the kept one is unusable: ${(error as Error).message}`;
    }
  }
  const names = certificateNames(host, kept ? sanEntries(kept) : []);
  const pems = await generate([{ name: "commonName", value: "gw self-signed" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now.getTime() - BACKDATE_MS),
    notAfterDate: new Date(now.getTime() + VALID_DAYS * DAY_MS),
    extensions: [
      // Not a CA: a client that trusts this certificate (NODE_EXTRA_CA_CERTS, curl --cacert)
      // trusts this server only, never certificates its key could sign for other sites.
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [...names.dns.map((value) => ({ type: 2 as const, value })), ...names.ips.map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  const pair = parseTlsPair(Buffer.from(pems.cert), Buffer.from(pems.private), paths.tlsCert, paths.tlsKey);
  mkdirSync(paths.tlsDir, { recursive: true, mode: 0o700 });
  // The key first: a crash between the two leaves a pair that does not match, which the next
  // start detects and replaces.
  writeFileAtomic(paths.tlsKey, pems.private, 0o600);
  writeFileAtomic(paths.tlsCert, pems.cert, 0o644);
  return { pair, madeBecause: reason };
}

/** Why a kept certificate cannot serve `host` at `now`, or null when it can. */
function staleness(pair: TlsPair, host: string, now: Date): string | null {
  if (pair.validTo.getTime() <= now.getTime()) return `the kept one expired on ${pair.validTo.toISOString()}`;
  if (!isWildcard(host) && !(isIP(host) ? pair.x509.checkIP(host) : pair.x509.checkHost(host))) return `the kept one does not name ${host}`;
  return null;
}

export interface CertificateNames {
  dns: string[];
  ips: string[];
}

/**
 * What a client may type to reach this server: localhost, the loopback addresses, the machine's
 * name (and its mDNS `.local` name), the --host asked for, and, when listening on every
 * interface, the machine's LAN addresses. Names an earlier certificate carried are kept, so
 * switching --host back and forth does not change the certificate each time.
 */
export function certificateNames(host: string, previous: string[]): CertificateNames {
  const dns = new Set<string>(["localhost"]);
  const ips = new Set<string>(["127.0.0.1", "::1"]);
  const machine = os.hostname().toLowerCase();
  if (isDnsName(machine)) {
    dns.add(machine);
    if (!machine.includes(".")) dns.add(`${machine}.local`);
  }
  const add = (name: string) => {
    if (isIP(name)) ips.add(canonicalIp(name));
    else if (isDnsName(name.toLowerCase())) dns.add(name.toLowerCase());
  };
  if (isWildcard(host)) {
    for (const address of Object.values(os.networkInterfaces()).flat()) {
      // Link-local IPv6 needs a zone id a URL cannot carry well; nobody types it.
      if (address && !address.internal && !(address.family === "IPv6" && address.scopeid)) add(address.address);
    }
  } else {
    add(host);
  }
  for (const name of previous) add(name);
  return { dns: [...dns], ips: [...ips] };
}

/** The DNS names and IP addresses a certificate names (Node prints `DNS:a, IP Address:b`). */
function sanEntries(pair: TlsPair): string[] {
  return (pair.x509.subjectAltName ?? "")
    .split(", ")
    .map((entry) => /^(?:DNS|IP Address):(.+)$/.exec(entry)?.[1])
    .filter((value): value is string => Boolean(value));
}

function isWildcard(host: string): boolean {
  return host === "" || host === "0.0.0.0" || host === "::";
}

function isDnsName(name: string): boolean {
  return name.length <= 253 && /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(name);
}

/** `0:0:0:0:0:0:0:1` and `::1` are one address. */
function canonicalIp(ip: string): string {
  return isIP(ip) === 6 ? new URL(`http://[${ip}]`).hostname.slice(1, -1) : ip;
}
