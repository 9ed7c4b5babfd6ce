// OpenAI's Files API under /v1/files, on the agent's own storage (gateway/storage/openai-files.ts):
// the official SDK's files.create, retrieve, list, content and delete. Bearer key and per-key rate
// limit as on /v1/storage; errors in the gateway's OpenAI envelope (docs/decisions.md §2), not
// the storage endpoints' bare `{message}`.
import { type H3, type H3Event, HTTPResponse } from "h3";
import type { Caller } from "../../gateway/auth/key-authenticator.js";
import { MethodNotAllowedError, RouteNotFoundError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { attachmentDisposition } from "../../gateway/storage/file-name.js";
import { toFileObject } from "../../gateway/storage/openai-files.js";
import { FileUploadFields, parseFileListQuery } from "../../gateway/storage/openai-files-requests.js";
import type { StorageLimits } from "../../gateway/storage/storage-context.js";
import { FileNotFoundError } from "../../gateway/storage/storage-errors.js";
import { admitCaller, nodeRequest, requestIdOf } from "../request-context.js";
import { fileIdOf } from "./storage.js";
import { readMultipartFile } from "./storage-multipart.js";

const FILES_PATH = "/v1/files";
/** The paths with routes, for the 405 answer to other methods. */
const FILE_PATH = /^\/v1\/files\/[^/]+(?:\/content)?$/;

export function registerFiles(app: H3, gateway: Gateway): void {
  const { files } = gateway;

  app.post(FILES_PATH, async (event) => {
    const { caller, limits } = await authorize(event, gateway);
    const fields = new FileUploadFields();
    const session = await gateway.storage.startUpload(caller.agent.id, limits);
    try {
      // `purpose` may come after the file: its bytes are stored by then, and go if it is refused.
      await readMultipartFile(
        nodeRequest(event),
        gateway.config.storage.maxFileBytes,
        (file) => session.receive(file),
        (name, value) => fields.accept(name, value),
      );
      const purpose = fields.requiredPurpose();
      return toFileObject({ ...(await session.commit({ purpose })), purpose });
    } catch (error) {
      await session.abort();
      throw error;
    }
  });

  app.get(FILES_PATH, async (event) => {
    const { caller } = await authorize(event, gateway);
    return files.list(caller.agent.id, parseFileListQuery(event.url.searchParams));
  });

  app.get(`${FILES_PATH}/:id`, async (event) => {
    const { caller } = await authorize(event, gateway);
    return files.retrieve(caller.agent.id, fileIdOf(event));
  });

  app.get(`${FILES_PATH}/:id/content`, async (event) => {
    const { caller } = await authorize(event, gateway);
    const content = await files.openContent(caller.agent.id, fileIdOf(event), requestIdOf(event));
    // A Node stream as the body: srvx pipes it with backpressure and destroys it when the client goes away.
    return new HTTPResponse(content.body as unknown as BodyInit, {
      status: 200,
      headers: {
        "content-type": content.contentType,
        "content-length": String(content.sizeBytes),
        "content-disposition": attachmentDisposition(content.file.filename),
        // The bytes are the user's, as on a signed download: never sniffed, never run as a page of the gateway.
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
        "cache-control": "private, no-store",
      },
    });
  });

  app.delete(`${FILES_PATH}/:id`, async (event) => {
    const { caller, limits } = await authorize(event, gateway);
    return files.remove(caller.agent.id, limits, fileIdOf(event));
  });

  // Everything else under /v1/files. A read or delete of a deeper path names no file: the same 404
  // as a missing or foreign id, after the same authentication.
  app.all(`${FILES_PATH}/**`, async (event) => {
    const method = event.req.method;
    const pathname = event.url.pathname;
    if (pathname === FILES_PATH || FILE_PATH.test(pathname)) throw new MethodNotAllowedError(`${method} is not allowed on ${pathname}.`);
    if (method === "GET" || method === "DELETE") {
      await authorize(event, gateway);
      throw new FileNotFoundError();
    }
    throw new RouteNotFoundError(`No endpoint at ${method} ${pathname}.`);
  });
}

async function authorize(event: H3Event, gateway: Gateway): Promise<{ caller: Caller; limits: StorageLimits }> {
  const { caller, plan } = await admitCaller(event, gateway);
  return { caller, limits: plan.limits };
}
