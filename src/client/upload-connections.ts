// The connections streamed uploads go out on. A gateway that refuses an upload from its headers
// (413: the file is over its per-file limit) answers at once and closes the connection while the
// client is still sending the body. The client's next write then fails (EPIPE, or ECONNRESET),
// and Node destroys the socket on that failure, before the answer it has already received is read:
// the user saw "cannot reach the gateway (EPIPE)" instead of the limit. The kernel keeps bytes
// received before the reset readable, so here a write the peer no longer takes is dropped instead
// of failing the socket: reading goes on, undici parses the answer, stops sending and returns it.
// A peer that went away without answering still fails the request, from the read side.
// undici is loaded on the first upload: every other command sends through fetch, and loading
// undici (~1 MB of modules) would cost them start-up time for nothing.
import type { Socket } from "node:net";
import type { Agent, buildConnector, Dispatcher } from "undici";

type WriteCallback = (error?: Error | null) => void;

const PEER_STOPPED_READING = new Set(["EPIPE", "ECONNRESET"]);

let agent: Agent | undefined;

/** What an upload request takes: undici's request() options less the dispatcher, which is this module's. */
export type UploadRequestOptions = Omit<Dispatcher.RequestOptions, "origin" | "path"> & { signal?: AbortSignal };

/** undici's request() on the one pooled upload dispatcher, both loaded and built on first use. */
export async function uploadRequest(url: string, options: UploadRequestOptions): Promise<Dispatcher.ResponseData> {
  const undici = await import("undici");
  agent ??= new undici.Agent({ connect: readingPastRefusedWrites(undici.buildConnector({})) });
  return undici.request(url, { ...options, dispatcher: agent });
}

function readingPastRefusedWrites(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      const socket = args[1];
      if (socket) dropWritesOncePeerStops(socket);
      callback(...args);
    });
}

function dropWritesOncePeerStops(socket: Socket): void {
  let peerStopped = false;
  const swallowRefusal =
    (callback: WriteCallback): WriteCallback =>
    (error) => {
      if (error && PEER_STOPPED_READING.has((error as NodeJS.ErrnoException).code ?? "")) {
        peerStopped = true;
        return callback();
      }
      callback(error);
    };
  const write = socket._write.bind(socket);
  socket._write = (chunk, encoding, callback) => (peerStopped ? callback() : write(chunk, encoding, swallowRefusal(callback)));
  const writev = socket._writev?.bind(socket);
  if (writev) socket._writev = (chunks, callback) => (peerStopped ? callback() : writev(chunks, swallowRefusal(callback)));
}
