// The one place errors become HTTP responses. GatewayErrors render their own envelope;
// upstream passthroughs go back verbatim; anything else is a 500 that reveals nothing.
import { HTTPResponse } from "h3";
import { GatewayError, InternalError, UpstreamPassthroughError } from "../gateway/errors.js";

export function errorResponse(error: unknown, requestId: string, log: (error: unknown) => void): HTTPResponse {
  if (error instanceof UpstreamPassthroughError) {
    return new HTTPResponse(error.body, { status: error.status, headers: { "content-type": error.contentType, "x-request-id": requestId } });
  }
  const gatewayError = error instanceof GatewayError ? error : new InternalError("The gateway failed to handle this request.");
  if (!(error instanceof GatewayError)) log(error);
  return new HTTPResponse(JSON.stringify(gatewayError.toBody()), {
    status: gatewayError.status,
    headers: { ...gatewayError.headers, "content-type": "application/json", "x-request-id": requestId },
  });
}
