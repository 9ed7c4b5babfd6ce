// The secret that signs storage links: `storage.signingSecret` from the config when set (several
// gateways behind one public URL must share it, e.g. "${GW_SIGNING_SECRET}"), else 32 random
// bytes kept in $GW_HOME/data/storage/signing.key, created on first use. The key is written to a
// temp file and hard-linked into place, which fails when the file exists: parallel first starts
// agree on one secret and nobody reads a half-written file. Replacing the secret voids
// every link already handed out, and nothing else. A configured secret written `hex:<64 hex>` is
// those 32 bytes: `gw migrate` carries a home's generated key into the config that way, so the
// links it signed keep working on every instance.
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const HEX_SECRET = /^[0-9a-f]{64}$/;

const HEX_CONFIGURED = /^hex:([0-9a-f]{64})$/;

/** `storage.signingSecret` as the bytes links are signed with. */
export function configuredSigningSecret(configured: string): Buffer {
  const hex = HEX_CONFIGURED.exec(configured)?.[1];
  return hex === undefined ? Buffer.from(configured, "utf8") : Buffer.from(hex, "hex");
}

/** The signing key file's secret as `storage.signingSecret` carries it (`hex:` and its 64 hex digits). */
export function signingSecretForConfig(file: string): string {
  return `hex:${loadSigningSecret(null, file).toString("hex")}`;
}

export function loadSigningSecret(configured: string | null, file: string): Buffer {
  if (configured !== null) return configuredSigningSecret(configured);
  if (!existsSync(file)) createSecretFile(file);
  const text = readFileSync(file, "utf8").trim();
  if (!HEX_SECRET.test(text)) {
    throw new Error(`storage signing key ${file} is not 64 hex characters; delete it to create a new one (links already issued stop working)`);
  }
  return Buffer.from(text, "hex");
}

function createSecretFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temporary, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600 });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}
