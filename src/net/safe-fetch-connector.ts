// Resolution and pinning for safeFetch. A host is resolved once per hop, every address it resolves
// to is checked, and the connection is then made to the checked address itself: undici is handed a
// connector that ignores the URL's hostname when opening the socket. No second DNS lookup happens,
// so an answer that changes between the check and the connect (DNS rebinding) cannot be used.
// TLS still verifies the certificate against the URL's hostname (SNI and identity check), and the
// Host header still carries it, because both come from the URL, not from the socket address.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { buildConnector } from "undici";
import { ADDRESS_CLASS_WORDS, checkAddress, parseAddress } from "./ip-policy.js";
import { FetchFailedError, UrlNotAllowedError } from "./safe-fetch-errors.js";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to every address it has. The default asks the system resolver. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** TEST HOOK: where the socket for a vetted address really goes. Never set outside tests. */
export type ConnectRedirect = (vetted: { address: string; port: number }) => { address: string; port: number };

export const systemResolver: HostResolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

/** The URL's hostname without the brackets WHATWG URL keeps around IPv6 literals. */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The address to connect to for this URL, after checking it (an IP literal) or every address its
 * hostname resolves to. `redirected` only changes the wording of a refusal.
 */
export async function vetHost(
  url: URL,
  settings: { resolve: HostResolver; allowPrivate: boolean; signal: AbortSignal; redirected: boolean },
): Promise<ResolvedAddress> {
  const hostname = bareHostname(url);
  const literal = parseAddress(hostname);
  // The URL parser already turned decimal, octal, hex and short IPv4 forms into a dotted quad;
  // parseAddress also reads those forms, so nothing that is an address is treated as a name.
  if (literal) {
    const address = literal.toString();
    if (!settings.allowPrivate) refuseIfNotPublic(address, settings.redirected ? "the URL redirects to" : "the URL points to");
    return { address, family: literal.kind() === "ipv6" ? 6 : 4 };
  }
  let answers: ResolvedAddress[];
  try {
    answers = await untilAborted(settings.resolve(hostname), settings.signal);
  } catch (error) {
    if (settings.signal.aborted) throw error;
    throw new FetchFailedError("dns", "the URL's host could not be resolved");
  }
  if (answers.length === 0) throw new FetchFailedError("dns", "the URL's host could not be resolved");
  if (!settings.allowPrivate) {
    const prefix = settings.redirected ? "the URL redirects to a host that resolves to" : "the URL's host resolves to";
    for (const answer of answers) refuseIfNotPublic(answer.address, prefix);
  }
  const first = answers[0]!;
  const parsed = parseAddress(first.address);
  if (!parsed) throw new UrlNotAllowedError("invalid", "the URL's host resolves to an address that cannot be checked");
  return { address: parsed.toString(), family: parsed.kind() === "ipv6" ? 6 : 4 };
}

function refuseIfNotPublic(address: string, prefix: string): void {
  const verdict = checkAddress(address);
  if (!verdict.allowed) {
    throw new UrlNotAllowedError(verdict.addressClass, `${prefix} ${ADDRESS_CLASS_WORDS[verdict.addressClass]}`);
  }
}

/** An undici connector that opens its socket to `vetted` whatever hostname undici asks for. */
export function pinnedConnector(
  url: URL,
  vetted: ResolvedAddress,
  settings: { connectTimeoutMs: number; connectRedirect: ConnectRedirect | undefined },
): buildConnector.connector {
  const connect = buildConnector({ timeout: settings.connectTimeoutMs });
  const hostname = bareHostname(url);
  const servername = isIP(hostname) === 0 ? hostname : undefined;
  return (options, callback) => {
    const port = Number(options.port) || (url.protocol === "https:" ? 443 : 80);
    const target = settings.connectRedirect ? settings.connectRedirect({ address: vetted.address, port }) : { address: vetted.address, port };
    const pinned: buildConnector.Options = { ...options, hostname: target.address, port: String(target.port) };
    if (servername !== undefined) pinned.servername = servername;
    connect(pinned, callback);
  };
}

/** Rejects with the signal's reason as soon as it aborts (DNS lookups cannot be cancelled). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
