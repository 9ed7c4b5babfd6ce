// Signed links (no API key): GET downloads a stored file, PUT sends the bytes of a presigned
// upload. The link's signature is the only credential; see blobs/signed-links.ts.
import { type H3, HTTPResponse } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { attachmentDisposition } from "../../gateway/storage/file-name.js";
import { StorageRequestError, UploadAbortedError } from "../../gateway/storage/storage-errors.js";
import { SIGNED_BLOB_PATH } from "../../gateway/storage/storage-service.js";
import { nodeRequest, requestIdOf } from "../request-context.js";
import { fileIdOf } from "./storage.js";

export function registerStorageLinks(app: H3, gateway: Gateway): void {
  app.get(`${SIGNED_BLOB_PATH}:id`, async (event) => {
    const download = await gateway.storage.openSignedDownload({
      method: event.req.method,
      id: fileIdOf(event),
      query: event.url.searchParams,
      requestId: requestIdOf(event),
    });
    // A Node stream as the body: srvx pipes it to the socket with backpressure, and destroys it
    // when the client goes away.
    return new HTTPResponse(download.body as unknown as BodyInit, {
      status: 200,
      headers: {
        "content-type": download.file.contentType,
        "content-length": String(download.sizeBytes),
        // RFC 6266 with an RFC 5987 filename*: every user filename becomes a safe header value.
        "content-disposition": attachmentDisposition(download.file.filename),
        // Stored bytes are the user's: never sniffed, never run as a page of the gateway's origin.
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
        "cache-control": "private, no-store",
      },
    });
  });

  // A HEAD is another method than the GET the link was signed for: refused like any other.
  app.head(`${SIGNED_BLOB_PATH}:id`, async (event) => {
    await gateway.storage.openSignedDownload({ method: event.req.method, id: fileIdOf(event), query: event.url.searchParams });
    return null;
  });

  app.put(`${SIGNED_BLOB_PATH}:id`, async (event) => {
    const request = nodeRequest(event);
    const lengthHeader = request.headers["content-length"];
    const contentLength = lengthHeader === undefined ? null : Number(lengthHeader);
    if (contentLength !== null && !Number.isSafeInteger(contentLength))
      throw new StorageRequestError("Content-Length is not a number of bytes.", "invalid_content_length");
    try {
      const file = await gateway.storage.receiveSignedUpload(
        { method: event.req.method, id: fileIdOf(event), query: event.url.searchParams, contentType: request.headers["content-type"] ?? null, contentLength },
        request,
      );
      return { data: file };
    } catch (error) {
      // The client went away mid-upload: say so (nothing was stored) rather than log a failure.
      if (!request.complete && request.destroyed) throw new UploadAbortedError();
      throw error;
    }
  });
}
