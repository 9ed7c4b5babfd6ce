// `gw doctor`: where the stored files' bytes go (`storage.driver`), said without a secret, and
// whether that store answers. For s3, the options must be complete (an unset `${NAME}` reads as
// empty) and the bucket must answer one ListObjectsV2 of at most one key through gw's own S3
// client: read-only, so the doctor never writes into a live bucket. For fs with `options.base`
// (a volume several instances share), the folder must exist and be writable.
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { S3Client, S3RequestError } from "../blobs/s3-client.js";
import { parseS3Settings, type S3Settings } from "../blobs/s3-settings.js";
import type { StorageSettings } from "../config/config-schema.js";
import type { DoctorCheck } from "./doctor-check-types.js";

/** The longest the bucket may take to answer the doctor, whatever `storage.options.timeoutMs` allows an upload. */
const PROBE_TIMEOUT_MS = 10_000;

/** `fs (DIR)`, `s3 (bucket B at HOST)` or the driver's name: for the drivers line. */
export function describeBlobs(storage: StorageSettings, defaultBase: string): string {
  if (storage.driver === "fs") return `fs (${fsBase(storage) ?? defaultBase})`;
  if (storage.driver === "s3") {
    const settings = s3SettingsOrProblem(storage);
    return typeof settings === "string" ? "s3 (options incomplete: see the blobs check)" : `s3 (bucket ${settings.bucket} at ${settings.endpoint.host})`;
  }
  return storage.driver;
}

/** The blobs check, or none for the default folder under the data dir (the data dir check covers it). */
export async function blobsCheck(storage: StorageSettings): Promise<DoctorCheck | undefined> {
  if (storage.driver === "fs") {
    const base = fsBase(storage);
    return base === undefined ? undefined : folderCheck(base);
  }
  if (storage.driver !== "s3") return { name: "blobs", status: "ok", detail: `storage.driver "${storage.driver}" is not checked by gw doctor` };
  const settings = s3SettingsOrProblem(storage);
  if (typeof settings === "string") return { name: "blobs", status: "error", detail: settings };
  return bucketCheck(settings);
}

async function bucketCheck(settings: S3Settings): Promise<DoctorCheck> {
  const client = new S3Client({ ...settings, timeoutMs: Math.min(settings.timeoutMs, PROBE_TIMEOUT_MS) });
  const where = `bucket ${settings.bucket} at ${settings.endpoint.host}`;
  try {
    await client.call({ action: "ListObjectsV2", method: "GET", objectKey: null, query: { "list-type": "2", "max-keys": "1", prefix: settings.prefix } });
    return { name: "blobs", status: "ok", detail: `${where} answers${settings.prefix ? ` (objects under ${settings.prefix})` : ""}` };
  } catch (error) {
    // Listing is the one call the doctor makes; gw itself only gets, puts, heads and deletes objects.
    if (error instanceof S3RequestError && error.code === "AccessDenied")
      return {
        name: "blobs",
        status: "warn",
        detail: `${where} answers, but these credentials may not list it (AccessDenied), so gw doctor could not check them further; gw needs Get/Put/Head/DeleteObject and multipart uploads`,
      };
    return { name: "blobs", status: "error", detail: error instanceof Error ? error.message : String(error) };
  }
}

function folderCheck(base: string): DoctorCheck {
  try {
    if (!statSync(base).isDirectory()) return { name: "blobs", status: "error", path: base, detail: `storage.options.base ${base} is not a folder` };
    accessSync(base, constants.R_OK | constants.W_OK);
    return { name: "blobs", status: "ok", path: base, detail: `${base} is writable` };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === "ENOENT" ? "does not exist (mount the shared volume, or create the folder)" : code === "EACCES" ? "is not writable" : String(error);
    return { name: "blobs", status: "error", path: base, detail: `storage.options.base ${base} ${problem}` };
  }
}

function fsBase(storage: StorageSettings): string | undefined {
  return typeof storage.options.base === "string" ? path.resolve(storage.options.base) : undefined;
}

/** The s3 settings, or why they are incomplete (the message names the option, never its value). */
function s3SettingsOrProblem(storage: StorageSettings): S3Settings | string {
  try {
    return parseS3Settings(storage.options);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
