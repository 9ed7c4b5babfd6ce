// A certificate and its private key, read and checked together before a server uses them: a
// half-written file, garbage or a key that belongs to another certificate is refused with a
// message naming the file, so a running server keeps what it has (tls-reload.ts).
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";

export interface TlsPair {
  /** PEM as read: the leaf first, then any intermediates (a certbot fullchain.pem). */
  cert: Buffer;
  key: Buffer;
  /** The leaf certificate. */
  x509: X509Certificate;
  /** Colon-separated upper-case hex, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint256: string;
  validTo: Date;
}

export class TlsPairError extends Error {}

export function readTlsPair(certFile: string, keyFile: string): TlsPair {
  return parseTlsPair(readPem(certFile, "certificate"), readPem(keyFile, "key"), certFile, keyFile);
}

export function parseTlsPair(cert: Buffer, key: Buffer, certFile: string, keyFile: string): TlsPair {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    throw new TlsPairError(`${certFile} is not a PEM certificate (${messageOf(error)})`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new TlsPairError(`${keyFile} is not a PEM private key (${messageOf(error)})`);
  }
  if (!x509.checkPrivateKey(privateKey)) throw new TlsPairError(`${keyFile} is not the private key of the certificate in ${certFile}`);
  try {
    // What the server will do with them; catches a broken intermediate after the leaf.
    createSecureContext({ cert, key });
  } catch (error) {
    throw new TlsPairError(`${certFile} and ${keyFile} cannot be served (${messageOf(error)})`);
  }
  return { cert, key, x509, fingerprint256: x509.fingerprint256, validTo: new Date(x509.validTo) };
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : messageOf(error);
    throw new TlsPairError(`cannot read the TLS ${what} ${file}: ${reason}`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
