// Why a config change was refused, apart from a bad value in the request (admin-requests.ts
// AdminInputError): what it names does not exist, or the config's state forbids it (a name taken,
// a provider in use). The CLI prints the message as it is (exit 1); the admin API answers 404 or
// 409 with it (server/admin/admin-config.ts).
export type RefusalKind = "not_found" | "conflict";

export class ConfigEditRefusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
  ) {
    super(message);
    this.name = "ConfigEditRefusal";
  }
}

/** Nothing of that name or at that position. */
export const notFound = (message: string) => new ConfigEditRefusal("not_found", message);

/** Exists already, in use, built in: the config as it stands forbids the change. */
export const conflict = (message: string) => new ConfigEditRefusal("conflict", message);
