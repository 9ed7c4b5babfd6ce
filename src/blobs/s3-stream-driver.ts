// An unstorage driver for S3 and S3-compatible stores (MinIO, Ceph, R2 ...) that streams both
// ways, so UnstorageBlobStore treats it like the streaming fs driver (`streamsWrites`):
//
// - `setItemRaw(key, Readable)` uploads as the bytes arrive (s3-upload.ts: one PutObject up to
//   8 MiB, else a multipart upload holding at most 24 MiB); the object appears complete or not at all.
// - `getItemStream` pipes GetObject's body, its size from Content-Length. BlobStore.read asks for
//   whole blobs only, so no Range requests are made.
// - has (HeadObject), remove (DeleteObject), keys (ListObjectsV2, every page), meta (HeadObject).
//
// unstorage's own s3 driver moves whole values in memory and lists one page only. Keys map like
// the fs driver's paths: `agent:file` is the object `<prefix>agent/file`.
import { PassThrough, pipeline, Readable } from "node:stream";
import { type Driver, defineDriver } from "unstorage";
import type { StreamingDriverExtras } from "./fs-stream-driver.js";
import { S3Client, xmlValue, xmlValues } from "./s3-client.js";
import { parseS3Settings } from "./s3-settings.js";
import { uploadObject } from "./s3-upload.js";

export type StreamingS3Driver = Driver<Record<string, unknown>, never> & StreamingDriverExtras;

export const streamingS3Driver = defineDriver((options: Record<string, unknown>) => {
  const settings = parseS3Settings(options);
  const client = new S3Client(settings);
  const { prefix } = settings;

  const objectKeyOf = (key: string): string => {
    const segments = key.split(":");
    if (segments.some((segment) => segment === "" || segment === "." || segment === ".."))
      throw new Error(`[unstorage] [gw-s3] Invalid key: ${JSON.stringify(key)}`);
    return prefix + segments.join("/");
  };

  const head = (key: string) => client.call({ action: "HeadObject", method: "HEAD", objectKey: objectKeyOf(key) }, { missingIsNull: true });

  const readWhole = async (key: string): Promise<Buffer | null> => {
    const answer = await client.open({ action: "GetObject", method: "GET", objectKey: objectKeyOf(key) }, { missingIsNull: true });
    if (!answer) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  const driver: StreamingS3Driver = {
    name: "gw-s3",
    // Not the options: they hold the secret key, and unstorage hands `options` to whoever asks for the mount.
    options: { bucket: settings.bucket, endpoint: settings.endpoint.origin, prefix },
    streamsWrites: true,
    async hasItem(key: string) {
      return (await head(key)) !== null;
    },
    // unstorage's whole-value reads; the gateway reads through getItemStream.
    async getItem(key: string) {
      return (await readWhole(key))?.toString("utf8") ?? null;
    },
    getItemRaw: readWhole,
    async setItemRaw(key: string, value: unknown) {
      const objectKey = objectKeyOf(key);
      if (value instanceof Readable) return uploadObject(client, objectKey, value);
      if (typeof value === "string" || value instanceof Uint8Array) return uploadObject(client, objectKey, Readable.from([Buffer.from(value)]));
      throw new TypeError("[unstorage] [gw-s3] setItemRaw takes a Readable, a Uint8Array or a string");
    },
    async removeItem(key: string) {
      // S3 answers 204 for a key that is not there too: removing a missing blob is no error.
      await client.call({ action: "DeleteObject", method: "DELETE", objectKey: objectKeyOf(key) }, { missingIsNull: true });
    },
    async getMeta(key: string) {
      const answer = await head(key);
      if (!answer) return {};
      const modified = answer.header("last-modified");
      return { size: Number(answer.header("content-length") ?? 0), ...(modified ? { mtime: new Date(modified) } : {}) };
    },
    async getKeys() {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const query: Record<string, string> = { "list-type": "2", prefix };
        if (token) query["continuation-token"] = token;
        const answer = await client.call({ action: "ListObjectsV2", method: "GET", objectKey: null, query });
        const text = answer?.text ?? "";
        for (const objectKey of xmlValues(text, "Key")) keys.push(objectKey.slice(prefix.length).replace(/\//g, ":"));
        token = xmlValue(text, "IsTruncated") === "true" ? xmlValue(text, "NextContinuationToken") : undefined;
      } while (token);
      return keys;
    },
    async getItemStream(key: string) {
      const answer = await client.open({ action: "GetObject", method: "GET", objectKey: objectKeyOf(key) }, { missingIsNull: true });
      if (!answer) return null;
      const length = answer.header("content-length");
      const sizeBytes = Number(length);
      if (length === undefined || !Number.isSafeInteger(sizeBytes)) {
        answer.body.destroy();
        throw new Error(`S3 GetObject ${settings.bucket}/${objectKeyOf(key)} answered without a Content-Length`);
      }
      // undici's body reports a destroy before its end as an error ("Request aborted"); a reader
      // that stops early (a client hanging up) is no fault of the blob. The source's own failures
      // still reach the reader.
      const body = new PassThrough();
      pipeline(answer.body, body, () => undefined);
      return { body, sizeBytes };
    },
    /** Nothing is staged locally: an upload that dies leaves parts only in the bucket (aborted, or the lifecycle rule's). */
    async sweepPartials() {
      return 0;
    },
  };
  return driver;
});
