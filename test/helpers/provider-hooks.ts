// What a ProviderContext takes beside its config in adapter tests: no secrets to redact beyond
// the ones a test passes, and warnings collected rather than printed.
import { redactNothing } from "../../src/net/secret-redaction.js";

export const warnings: string[] = [];

export const providerHooks = { redact: redactNothing, warn: (message: string) => void warnings.push(message) };
