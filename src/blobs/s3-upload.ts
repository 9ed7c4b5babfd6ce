// Writing one object from a stream without holding it whole. Bytes are collected up to one part
// (8 MiB; S3's minimum part is 5 MiB): a stream that ends before that is one PutObject. A longer
// one becomes a multipart upload with at most two parts in flight, so one upload holds at most
// three parts in memory (24 MiB) whatever its size, and reading the source pauses meanwhile.
// CompleteMultipartUpload makes the object appear at once, all bytes or none (BlobStore.write's
// contract); on any failure, the source's included, the upload is aborted (best effort: a bucket
// lifecycle rule AbortIncompleteMultipartUpload removes what an abort could not).
import type { Readable } from "node:stream";
import { escapeXml, type S3Client, xmlValue } from "./s3-client.js";

export const PART_SIZE_BYTES = 8 * 1024 * 1024;
export const PARTS_IN_FLIGHT = 2;

export async function uploadObject(client: S3Client, objectKey: string, body: Readable): Promise<void> {
  const collector = new PartCollector(PART_SIZE_BYTES);
  let upload: MultipartUpload | null = null;
  try {
    for await (const chunk of body) {
      collector.add(chunk as Buffer);
      for (let part = collector.takeFull(); part; part = collector.takeFull()) {
        upload ??= await MultipartUpload.start(client, objectKey);
        await upload.send(part);
      }
    }
    const rest = collector.takeRest();
    if (!upload) {
      await client.call({ action: "PutObject", method: "PUT", objectKey, body: rest, headers: { "content-type": "application/octet-stream" } });
      return;
    }
    if (rest.length > 0) await upload.send(rest);
    await upload.complete();
  } catch (error) {
    await upload?.abort();
    throw error;
  }
}

/** Chunks in, exact parts out; a part is one fresh buffer, so nothing keeps a finished part alive. */
class PartCollector {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly partSize: number) {}

  add(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  takeFull(): Buffer<ArrayBuffer> | null {
    if (this.bytes < this.partSize) return null;
    const joined = Buffer.concat(this.chunks, this.bytes);
    const part = joined.subarray(0, this.partSize);
    // A copy: a view would keep the whole joined buffer alive with the next part.
    const rest = Buffer.from(joined.subarray(this.partSize));
    this.chunks = rest.length > 0 ? [rest] : [];
    this.bytes = rest.length;
    return part;
  }

  takeRest(): Buffer<ArrayBuffer> {
    const rest = Buffer.concat(this.chunks, this.bytes);
    this.chunks = [];
    this.bytes = 0;
    return rest;
  }
}

class MultipartUpload {
  private readonly etags: string[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: unknown = null;

  private constructor(
    private readonly client: S3Client,
    private readonly objectKey: string,
    private readonly uploadId: string,
  ) {}

  static async start(client: S3Client, objectKey: string): Promise<MultipartUpload> {
    const answer = await client.call({
      action: "CreateMultipartUpload",
      method: "POST",
      objectKey,
      query: { uploads: "" },
      headers: { "content-type": "application/octet-stream" },
    });
    const uploadId = answer ? xmlValue(answer.text, "UploadId") : undefined;
    if (!uploadId) throw new Error(`S3 CreateMultipartUpload ${client.bucket}/${objectKey} answered without an UploadId`);
    return new MultipartUpload(client, objectKey, uploadId);
  }

  /** Start sending the next part; waits first while PARTS_IN_FLIGHT are under way. */
  async send(part: Buffer<ArrayBuffer>): Promise<void> {
    while (this.inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(this.inFlight);
    this.throwIfFailed();
    const index = this.etags.length;
    this.etags.push("");
    const sending = this.sendPart(index + 1, part).then(
      (etag) => {
        this.etags[index] = etag;
      },
      (error: unknown) => {
        this.failure ??= error;
      },
    );
    this.inFlight.add(sending);
    void sending.finally(() => this.inFlight.delete(sending));
  }

  async complete(): Promise<void> {
    await this.settle();
    this.throwIfFailed();
    const parts = this.etags.map((etag, index) => `<Part><PartNumber>${index + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join("");
    await this.client.call({
      action: "CompleteMultipartUpload",
      method: "POST",
      objectKey: this.objectKey,
      query: { uploadId: this.uploadId },
      headers: { "content-type": "application/xml" },
      body: `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`,
    });
  }

  /** Best effort: the caller's error is what matters; parts left behind are the lifecycle rule's. */
  async abort(): Promise<void> {
    // A part still being sent could land after the abort and keep its bytes.
    await this.settle();
    await this.client
      .call({ action: "AbortMultipartUpload", method: "DELETE", objectKey: this.objectKey, query: { uploadId: this.uploadId } })
      .catch(() => undefined);
  }

  private async sendPart(partNumber: number, part: Buffer<ArrayBuffer>): Promise<string> {
    const answer = await this.client.call({
      action: "UploadPart",
      method: "PUT",
      objectKey: this.objectKey,
      query: { partNumber: String(partNumber), uploadId: this.uploadId },
      body: part,
    });
    const etag = answer?.header("etag");
    if (!etag) throw new Error(`S3 UploadPart ${partNumber} of ${this.client.bucket}/${this.objectKey} answered without an ETag`);
    return etag;
  }

  private async settle(): Promise<void> {
    await Promise.all(this.inFlight);
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }
}
