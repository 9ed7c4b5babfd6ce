// manifest.json, the first entry of every backup archive: who made it, from which home, and every
// other entry with its size and SHA-256. A restore refuses an archive whose entries differ from it
// in any way (one missing, one extra, one byte changed) before anything reaches the home.
import { z } from "zod";
import { isGwArchivePath } from "./home-entries.js";

export const MANIFEST_NAME = "manifest.json";
export const BACKUP_FORMAT = "gw-backup";
/** A manifest is read whole into memory: far above what a home of millions of files needs. */
export const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

const fileSchema = z.object({
  path: z.string().refine(isGwArchivePath, "not a path inside a gw home (config.json, data/, tls/)"),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "not a hex SHA-256"),
});

const manifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  version: z.literal(1),
  gwVersion: z.string(),
  createdAt: z.string(),
  sourceHome: z.string(),
  /** What the snapshot holds, for people reading the manifest. */
  contents: z.object({
    agents: z.number().int().nonnegative(),
    keys: z.number().int().nonnegative(),
    storedFiles: z.number().int().nonnegative(),
    usagePeriods: z.array(z.string()),
  }),
  files: z.array(fileSchema),
});

export type ManifestFile = z.infer<typeof fileSchema>;
export type BackupManifest = z.infer<typeof manifestSchema>;
export type BackupContents = BackupManifest["contents"];

/** Parse and check a manifest; throws an Error saying what is wrong. */
export function parseManifest(text: string): BackupManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${MANIFEST_NAME} is not JSON (${(error as Error).message})`);
  }
  const result = manifestSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(`${MANIFEST_NAME} is not a gw backup manifest: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  const seen = new Set<string>();
  for (const file of result.data.files) {
    if (seen.has(file.path)) throw new Error(`${MANIFEST_NAME} lists ${file.path} twice`);
    seen.add(file.path);
  }
  return result.data;
}

export function serializeManifest(manifest: BackupManifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
