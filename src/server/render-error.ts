// The one place errors become HTTP responses, in the caller's dialect: the gateway envelope of
// docs/decisions.md §2 (`{error:{message,type,code,...}}`), Anthropic's `{type:"error",error:{type,
// message}}` on the messages endpoint, or the storage endpoints' bare `{message}` on /v1/storage/*.
// Upstream errors about a value go back verbatim.
import { HTTPError, HTTPResponse } from "h3";
import { ExpiredApiKeyError, GatewayError, InternalError, InvalidApiKeyError, MalformedRequestError, UpstreamPassthroughError } from "../gateway/errors.js";
import { messagesErrorType } from "../gateway/messages/chat-stream-to-messages-events.js";
import { storeUnavailableOf } from "../gateway/storage/blob-store-failures.js";

export type ErrorDialect = "gateway" | "messages" | "storage";

export function errorResponse(error: unknown, requestId: string, dialect: ErrorDialect, log: (error: unknown) => void): HTTPResponse {
  if (error instanceof UpstreamPassthroughError) {
    const body = dialect === "messages" ? messagesBodyOfUpstream(error) : error.body;
    const contentType = dialect === "messages" ? "application/json" : error.contentType;
    return new HTTPResponse(body, { status: error.status, headers: { "content-type": contentType, "x-request-id": requestId } });
  }
  const storeFailure = error instanceof GatewayError ? undefined : storeUnavailableOf(error);
  const gatewayError =
    error instanceof GatewayError ? error : (storeFailure ?? clientErrorOf(error) ?? new InternalError("The gateway failed to handle this request."));
  // The store's failure in full (bucket, host, its message) is the operator's: logged, not answered.
  if ((gatewayError instanceof InternalError || storeFailure) && !(error instanceof GatewayError)) log(error);
  const body =
    dialect === "messages"
      ? messagesBody(gatewayError.status, messagesMessage(gatewayError))
      : dialect === "storage"
        ? JSON.stringify({ message: gatewayError.message })
        : JSON.stringify(gatewayError.toBody());
  return new HTTPResponse(body, {
    status: gatewayError.status,
    headers: { ...gatewayError.headers, "content-type": "application/json", "x-request-id": requestId },
  });
}

/**
 * h3's own 4xx (a malformed URL) is the client's error, not a 500. It arrives as h3's HTTPError,
 * or (after the app unwraps `cause`) as the plain details object h3 built it from.
 */
function clientErrorOf(error: unknown): MalformedRequestError | undefined {
  const plainObject = typeof error === "object" && error !== null && Object.getPrototypeOf(error) === Object.prototype;
  const details = HTTPError.isError(error) || plainObject ? (error as { status?: unknown; message?: unknown }) : undefined;
  const status = details?.status;
  if (typeof status !== "number" || status < 400 || status >= 500) return undefined;
  const reason = typeof details?.message === "string" && details.message ? details.message : "malformed";
  return new MalformedRequestError(status, `The request was refused: ${reason}.`);
}

function messagesMessage(error: GatewayError): string {
  return error instanceof InvalidApiKeyError && !(error instanceof ExpiredApiKeyError)
    ? "Invalid API key. Send a valid gw key in the `x-api-key` header."
    : error.message;
}

function messagesBody(status: number, message: string): string {
  return JSON.stringify({ type: "error", error: { type: messagesErrorType(status), message } });
}

/** Anthropic's own error body as it came; any other vendor's error restated in that shape. */
function messagesBodyOfUpstream(error: UpstreamPassthroughError): string {
  for (const candidate of [error.vendorBody, error.body]) {
    if (!candidate) continue;
    try {
      const parsed = JSON.parse(candidate) as { type?: unknown; error?: { type?: unknown; message?: unknown } };
      if (parsed.type === "error" && typeof parsed.error?.type === "string") return candidate;
      if (typeof parsed.error?.message === "string") return messagesBody(error.status, parsed.error.message);
    } catch {
      // not JSON: described from the status below
    }
  }
  return messagesBody(error.status, `The upstream answered HTTP ${error.status}.`);
}
