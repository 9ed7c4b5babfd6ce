// `storage.options` for `storage.driver: "s3"`, checked once when the store opens. A missing or
// malformed option stops the start with a message naming it, never echoing its value (it may be a
// secret). `${NAME}` references were already replaced by the config loader, like everywhere else.

export interface S3Settings {
  /** Scheme, host and port of the S3 API (no user info); AWS's regional endpoint when not configured. */
  endpoint: URL;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Prepended to every object key, "" or ending in "/". */
  prefix: string;
  /** `<endpoint>/<bucket>/<key>` (MinIO, s3rver, most self-hosted stores) instead of `<bucket>.<endpoint host>/<key>`. */
  pathStyle: boolean;
  /** How long a request may take until its answer's headers arrive. */
  timeoutMs: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** DNS-compatible bucket names, as S3 requires for virtual-hosted addressing. */
const BUCKET_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX_PATTERN = /^[A-Za-z0-9!_.*'()/-]*$/;

export function parseS3Settings(options: Record<string, unknown>): S3Settings {
  const bucket = requiredString(options, "bucket");
  if (!BUCKET_PATTERN.test(bucket)) throw invalid("bucket", "is not a valid bucket name (3-63 characters: lowercase letters, digits, dots, hyphens)");
  const region = optionalString(options, "region") ?? "us-east-1";
  const accessKeyId = requiredString(options, "accessKeyId");
  const secretAccessKey = requiredString(options, "secretAccessKey");
  const sessionToken = optionalString(options, "sessionToken");
  const configuredEndpoint = optionalString(options, "endpoint");
  const endpoint = configuredEndpoint === undefined ? new URL(`https://s3.${region}.amazonaws.com`) : parseEndpoint(configuredEndpoint);
  const forcePathStyle = options.forcePathStyle;
  if (forcePathStyle !== undefined && typeof forcePathStyle !== "boolean") throw invalid("forcePathStyle", "must be true or false");
  // Custom endpoints usually serve buckets under a path only; AWS prefers (and for new
  // regions requires) the bucket in the host name. Dots in a bucket name break TLS on AWS hosts.
  const pathStyle = forcePathStyle ?? (!isAwsHost(endpoint.hostname) || bucket.includes("."));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw invalid("timeoutMs", "must be a positive whole number of milliseconds");
  const settings: S3Settings = {
    endpoint,
    bucket,
    region,
    accessKeyId,
    secretAccessKey,
    prefix: parsePrefix(optionalString(options, "prefix")),
    pathStyle,
    timeoutMs,
  };
  if (sessionToken !== undefined) settings.sessionToken = sessionToken;
  return settings;
}

function parseEndpoint(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("endpoint", "is not a URL (e.g. http://127.0.0.1:9000)");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid("endpoint", "must be an http:// or https:// URL");
  // Credentials belong in accessKeyId/secretAccessKey; a URL is printed in errors.
  if (url.username || url.password) throw invalid("endpoint", "must not carry a user name or password");
  if (url.search || url.hash) throw invalid("endpoint", "must not have a query or fragment");
  return new URL(url.origin + url.pathname.replace(/\/+$/, ""));
}

function parsePrefix(prefix: string | undefined): string {
  if (prefix === undefined) return "";
  if (!PREFIX_PATTERN.test(prefix) || prefix.split("/").some((segment) => segment === "." || segment === "..")) {
    throw invalid("prefix", "may hold letters, digits and !_.*'()/- only");
  }
  const trimmed = prefix.replace(/^\/+|\/+$/g, "");
  return trimmed ? `${trimmed}/` : "";
}

function isAwsHost(hostname: string): boolean {
  return hostname === "amazonaws.com" || hostname.endsWith(".amazonaws.com");
}

function requiredString(options: Record<string, unknown>, name: string): string {
  const value = optionalString(options, name);
  if (value === undefined) throw invalid(name, "is required (a `${NAME}` reference to an unset variable reads as empty)");
  return value;
}

/** An empty string counts as missing: it is what an unset `${NAME}` interpolates to. */
function optionalString(options: Record<string, unknown>, name: string): string | undefined {
  const value = Object.hasOwn(options, name) ? options[name] : undefined;
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw invalid(name, "must be a string");
  return value;
}

function invalid(name: string, problem: string): Error {
  return new Error(`storage.options.${name} ${problem}: storage.driver "s3" cannot start`);
}
