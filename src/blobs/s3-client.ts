// The few S3 REST calls the blob driver makes: aws4fetch signs the method, URL and headers with
// SigV4, undici sends them. Payloads are `UNSIGNED-PAYLOAD` (aws4fetch's default for s3 header
// signing): no body hashing, no aws-chunked encoding, which many S3-compatible stores lack. The
// body goes to undici as it is: a fetch Request would copy every 8 MiB part. Every failure becomes
// an S3RequestError naming the action, the bucket and key, and the store's error code: never the
// credentials, the signature or the endpoint's user info (settings refuse user info anyway).
import type { Readable } from "node:stream";
import { AwsClient } from "aws4fetch";
import { type Dispatcher, request } from "undici";
import { BlobStoreFailure } from "./blob-store.js";
import type { S3Settings } from "./s3-settings.js";

export class S3RequestError extends BlobStoreFailure {
  constructor(
    message: string,
    /** For a client: the action and the store's code or the network's (BlobStoreFailure). */
    reason: string,
    /** The HTTP status the store answered, when it answered. */
    readonly status?: number,
    /** The store's error code (`NoSuchKey`, `InvalidAccessKeyId` ...), when it said one. */
    readonly code?: string,
  ) {
    super(message, reason);
    this.name = "S3RequestError";
  }
}

export interface S3Call {
  /** The S3 action, for messages: PutObject, UploadPart ... */
  action: string;
  method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  /** The object's full key (prefix included), or null for a bucket-level call. */
  objectKey: string | null;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface S3Answer {
  status: number;
  header(name: string): string | undefined;
  text: string;
}

export interface S3Stream {
  header(name: string): string | undefined;
  body: Readable;
}

/** The longest part of a store's own error message quoted in ours. */
const MAX_QUOTED = 200;

export class S3Client {
  private readonly signer: AwsClient;

  constructor(private readonly settings: S3Settings) {
    this.signer = new AwsClient({
      service: "s3",
      region: settings.region,
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      ...(settings.sessionToken !== undefined ? { sessionToken: settings.sessionToken } : {}),
      // Retries are the caller's decision: a retried upload must not double a part silently.
      retries: 0,
    });
  }

  get bucket(): string {
    return this.settings.bucket;
  }

  /**
   * A call whose whole answer is read (within the timeout). 404 resolves when `missingIsNull`
   * says it may (null), any other status outside 2xx rejects.
   */
  async call(call: S3Call, options: { missingIsNull?: boolean } = {}): Promise<S3Answer | null> {
    const timer = new Deadline(this.settings.timeoutMs);
    try {
      const response = await this.send(call, timer);
      const text = await response.body.text().catch((error: unknown) => {
        throw this.failure(call, error, timer);
      });
      if (response.statusCode === 404 && options.missingIsNull) return null;
      if (response.statusCode < 200 || response.statusCode > 299) throw this.refusal(call, response.statusCode, text);
      // CompleteMultipartUpload may answer 200 and then report the failure in the body.
      if (/^(?:<\?xml[^>]*\?>)?\s*<Error>/.test(text)) throw this.refusal(call, 500, text);
      return { status: response.statusCode, header: headerReader(response.headers), text };
    } finally {
      timer.clear();
    }
  }

  /** A call whose body the caller streams: the timeout stops at the answer's headers. */
  async open(call: S3Call, options: { missingIsNull?: boolean } = {}): Promise<S3Stream | null> {
    const timer = new Deadline(this.settings.timeoutMs);
    let response: Dispatcher.ResponseData;
    try {
      response = await this.send(call, timer);
    } finally {
      timer.clear();
    }
    if (response.statusCode >= 200 && response.statusCode <= 299) return { header: headerReader(response.headers), body: response.body };
    const text = await response.body.text().catch(() => "");
    if (response.statusCode === 404 && options.missingIsNull) return null;
    throw this.refusal(call, response.statusCode, text);
  }

  private async send(call: S3Call, timer: Deadline): Promise<Dispatcher.ResponseData> {
    try {
      // Signed without the body: it is not hashed (UNSIGNED-PAYLOAD), and handing it over would copy it.
      const signed = await this.signer.sign(this.urlOf(call), { method: call.method, headers: call.headers ?? {} });
      const headers: Record<string, string> = {};
      signed.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return await request(signed.url, { method: call.method, headers, body: call.body ?? null, signal: timer.signal });
    } catch (error) {
      throw this.failure(call, error, timer);
    }
  }

  private urlOf(call: S3Call): string {
    const { endpoint, bucket, pathStyle } = this.settings;
    const encodedKey = call.objectKey === null ? "" : call.objectKey.split("/").map(encodeURIComponent).join("/");
    const basePath = endpoint.pathname.replace(/\/+$/, "");
    const base = pathStyle ? `${endpoint.origin}${basePath}/${bucket}` : `${endpoint.protocol}//${bucket}.${endpoint.host}${basePath}`;
    const url = new URL(`${base}/${encodedKey}`);
    for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
    return url.toString();
  }

  private what(call: S3Call): string {
    const target = call.objectKey === null ? this.settings.bucket : `${this.settings.bucket}/${call.objectKey}`;
    return `S3 ${call.action} ${target} at ${this.settings.endpoint.host}`;
  }

  /** The store answered with an error status. */
  private refusal(call: S3Call, status: number, text: string): S3RequestError {
    const code = xmlValue(text, "Code");
    const message = xmlValue(text, "Message")?.slice(0, MAX_QUOTED);
    const detail = code ? `${code}${message ? `: ${message}` : ""}` : `HTTP ${status}`;
    return new S3RequestError(`${this.what(call)} was refused: ${detail}`, `S3 ${call.action}: ${code?.slice(0, 64) ?? `HTTP ${status}`}`, status, code);
  }

  /** The store did not answer (refused connection, DNS, timeout, a cut answer). */
  private failure(call: S3Call, error: unknown, timer: Deadline): S3RequestError {
    if (error instanceof S3RequestError) return error;
    if (timer.expired) {
      return new S3RequestError(
        `${this.what(call)} did not answer within ${this.settings.timeoutMs} ms`,
        `S3 ${call.action}: no answer within ${this.settings.timeoutMs} ms`,
      );
    }
    const reason = errorCode(error) ?? errorCode((error as { cause?: unknown } | null)?.cause) ?? (error instanceof Error ? error.message : String(error));
    const networkCode = errorCode(error) ?? errorCode((error as { cause?: unknown } | null)?.cause) ?? "unreachable";
    return new S3RequestError(
      `${this.what(call)} failed: the store could not be reached (${reason.slice(0, MAX_QUOTED)})`,
      `S3 ${call.action}: ${networkCode}`,
    );
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function headerReader(headers: Record<string, string | string[] | undefined>): (name: string) => string | undefined {
  return (name) => {
    const value = headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(", ") : value;
  };
}

/** An abort signal that fires after `ms`, cleared once the call no longer needs it. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  expired = false;

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** The text of the first `<tag>` element, entities decoded; S3's XML answers are flat enough for this. */
export function xmlValue(xml: string, tag: string): string | undefined {
  return xmlValues(xml, tag)[0];
}

export function xmlValues(xml: string, tag: string): string[] {
  return Array.from(xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g")), (match) => decodeXml(match[1] ?? ""));
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function decodeXml(text: string): string {
  return text.replace(/&(?:#(\d+)|#x([0-9a-fA-F]+)|(amp|lt|gt|quot|apos));/g, (_match, decimal: string, hex: string, name: string) => {
    if (decimal) return String.fromCodePoint(Number(decimal));
    if (hex) return String.fromCodePoint(Number.parseInt(hex, 16));
    return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }[name] ?? "";
  });
}
