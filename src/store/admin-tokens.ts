// Admin tokens (docs/decisions.md §25): `gwa_` + 32 random bytes in base62, shown once, kept as a
// SHA-256 hash in the metadata document beside the keys. Their own prefix keeps the two apart: an
// API key never opens the admin API, an admin token never calls a model.
import { ulid } from "ulid";
import { hashApiKey, hashesEqual, randomBase62 } from "./api-keys.js";
import type { MetadataRecords } from "./metadata-store.js";
import { ProvisioningError } from "./provisioning.js";
import type { AdminTokenRecord, MetadataData } from "./records.js";

export const ADMIN_TOKEN_PATTERN = /^gwa_[0-9A-Za-z]{43,}$/;
const VISIBLE_CHARACTERS = 8;

export interface AdminTokenSettings {
  name: string;
  readOnly: boolean;
  expiresAt?: string;
}

export interface CreatedAdminToken {
  token: string;
  record: AdminTokenRecord;
}

export function adminTokensOf(data: MetadataData): AdminTokenRecord[] {
  return data.adminTokens ?? [];
}

/** A token that opens the admin API now: not revoked, not expired. */
export function isLiveAdminToken(record: AdminTokenRecord, now: number): boolean {
  return record.revokedAt === null && (record.expiresAt === undefined || Date.parse(record.expiresAt) > now);
}

/** Whether the admin API and console are on: they are while at least one live token exists. */
export function adminEnabled(data: MetadataData, now: number): boolean {
  return adminTokensOf(data).some((record) => isLiveAdminToken(record, now));
}

/** The stored record a presented token is, live or not; undefined for one never issued. */
export function findAdminToken(data: MetadataData, presented: string): AdminTokenRecord | undefined {
  const hash = hashApiKey(presented);
  return adminTokensOf(data).find((record) => hashesEqual(record.hash, hash));
}

export async function createAdminToken(store: MetadataRecords, settings: AdminTokenSettings): Promise<CreatedAdminToken> {
  const name = settings.name.trim();
  if (name === "") throw new ProvisioningError("an admin token needs a name (--name), to tell it apart in the audit log");
  const token = `gwa_${randomBase62()}`;
  return store.mutate((data) => {
    data.adminTokens ??= [];
    const tokens = data.adminTokens;
    if (tokens.some((record) => record.revokedAt === null && record.name === name))
      throw new ProvisioningError(`an admin token named "${name}" already exists; revoke it or choose another name`);
    const record: AdminTokenRecord = {
      id: `adm_${ulid()}`,
      name,
      prefix: token.slice(0, 4 + VISIBLE_CHARACTERS),
      hash: hashApiKey(token),
      readOnly: settings.readOnly,
      createdAt: new Date().toISOString(),
      ...(settings.expiresAt === undefined ? {} : { expiresAt: settings.expiresAt }),
      revokedAt: null,
    };
    tokens.push(record);
    return { token, record: { ...record } };
  });
}

/** Revoke the one live token a name, prefix or id names; refuses none and an ambiguous one. */
export async function revokeAdminToken(store: MetadataRecords, nameOrPrefix: string): Promise<AdminTokenRecord> {
  return store.mutate((data) => {
    const live = adminTokensOf(data).filter(
      (record) => record.revokedAt === null && (record.name === nameOrPrefix || record.id === nameOrPrefix || record.prefix.startsWith(nameOrPrefix)),
    );
    const [record] = live;
    if (record === undefined) throw new ProvisioningError(`no active admin token matches "${nameOrPrefix}"`);
    if (live.length > 1) throw new ProvisioningError(`"${nameOrPrefix}" matches ${live.length} admin tokens; give its name or more of the prefix`);
    record.revokedAt = new Date().toISOString();
    return { ...record };
  });
}
