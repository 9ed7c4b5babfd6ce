// A real S3-compatible server for tests: s3rver (from npm), in this process, on a free loopback
// port, its objects in a folder of its own, with the buckets asked for. It speaks the S3 protocol
// (ListObjectsV2, multipart uploads, ranges) but checks access key ids only, not SigV4 signatures.

import type http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tempDir } from "./temp-dirs.js";

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer: http.Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass;

export interface TestS3 {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  port: number;
  /** Where s3rver keeps the buckets' objects. */
  directory: string;
  /** Its HTTP server, for tests that watch the requests it receives. */
  httpServer: http.Server;
  close(): Promise<void>;
}

export async function startS3(buckets: readonly string[], directory = tempDir("gw-s3rver-")): Promise<TestS3> {
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, port, directory, httpServer: server.httpServer, close: () => server.close() };
}
