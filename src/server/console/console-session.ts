// The console's sessions (docs/decisions.md §27): a cookie that says which admin token signed in,
// until when, and a random nonce, signed with HMAC-SHA256 under a key derived from the storage
// signing secret (storage.signingSecret, or the home's data/storage/signing.key): every instance
// that shares the secret accepts every session, with nothing kept in memory. The cookie holds no
// secret of its own; each request still checks the token it names (console-access.ts), so a
// revoked or expired token ends its sessions at once. A session's CSRF token is an HMAC of the
// session under the same key: it changes with every sign-in and needs no storage either.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import path from "node:path";
import { configuredSigningSecret, loadSigningSecret } from "../../blobs/signing-secret.js";

export const SESSION_COOKIE = "gw_console";
export const SESSION_LIFETIME_SECONDS = 12 * 60 * 60;
const VERSION = "v1";
const TOKEN_ID = /^adm_[0-9A-Za-z]+$/;

export interface ConsoleSession {
  tokenId: string;
  /** Unix seconds. */
  expires: number;
  /** The cookie's value, the CSRF token's input. */
  value: string;
}

export class SessionSigner {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    // A key of its own: a console cookie can never pass for a storage link's signature, nor the reverse.
    this.key = createHmac("sha256", secret).update("gw-console-session").digest();
  }

  /** A new session's cookie value for an admin token. */
  issue(tokenId: string, now: number): string {
    const expires = Math.floor(now / 1000) + SESSION_LIFETIME_SECONDS;
    const body = `${VERSION}.${tokenId}.${expires}.${randomBytes(12).toString("base64url")}`;
    return `${body}.${this.mac(body)}`;
  }

  /** The session a cookie value is, when its signature holds and it has not expired. */
  read(value: string | undefined, now: number): ConsoleSession | null {
    if (!value) return null;
    const parts = value.split(".");
    if (parts.length !== 5 || parts[0] !== VERSION) return null;
    const [, tokenId, expiresText, , mac] = parts as [string, string, string, string, string];
    if (!this.macMatches(parts.slice(0, 4).join("."), mac)) return null;
    const expires = Number(expiresText);
    if (!TOKEN_ID.test(tokenId) || !Number.isSafeInteger(expires) || expires * 1000 <= now) return null;
    return { tokenId, expires, value };
  }

  csrfToken(session: ConsoleSession): string {
    return this.mac(`csrf.${session.value}`);
  }

  csrfMatches(session: ConsoleSession, presented: string | null | undefined): boolean {
    return typeof presented === "string" && this.macMatches(`csrf.${session.value}`, presented);
  }

  private mac(text: string): string {
    return createHmac("sha256", this.key).update(text).digest("base64url");
  }

  private macMatches(text: string, presented: string): boolean {
    const expected = Buffer.from(this.mac(text));
    const given = Buffer.from(presented);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** The signer for the secret in force: storage.signingSecret when set, else the home's key file (created on first use, as storage does). */
export class SessionSigners {
  private current: { configured: string | null; signer: SessionSigner } | undefined;

  constructor(private readonly dataDir: string) {}

  of(configured: string | null): SessionSigner {
    if (this.current?.configured !== configured || this.current === undefined) {
      const secret = configured !== null ? configuredSigningSecret(configured) : loadSigningSecret(null, path.join(this.dataDir, "storage", "signing.key"));
      this.current = { configured, signer: new SessionSigner(secret) };
    }
    return this.current.signer;
  }
}
