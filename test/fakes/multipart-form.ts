/**
 * multipart/form-data request bodies as the fake vendors read them (busboy): scalar fields by
 * name (repeated names keep every value, in order) and file parts with their bytes.
 */

import type http from "node:http";
import busboy from "busboy";

export interface FormFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface ParsedForm {
  fields: Record<string, string[]>;
  files: FormFile[];
}

/** First value of a field. */
export function field(form: ParsedForm, name: string): string | undefined {
  return form.fields[name]?.[0];
}

export function parseMultipart(headers: http.IncomingHttpHeaders, body: Buffer): Promise<ParsedForm> {
  return new Promise((resolve, reject) => {
    const form: ParsedForm = { fields: {}, files: [] };
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers, limits: { fileSize: 64 * 1024 * 1024 } });
    } catch (error) {
      reject(error);
      return;
    }
    parser.on("field", (name, value) => {
      form.fields[name] ??= [];
      form.fields[name].push(value);
    });
    parser.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => form.files.push({ field: name, filename: info.filename ?? "", contentType: info.mimeType, bytes: Buffer.concat(chunks) }));
    });
    parser.on("error", reject);
    parser.on("close", () => resolve(form));
    parser.end(body);
  });
}
