// Flags shared by the commands.
import { Flags } from "@oclif/core";
import { UsageError } from "./cli-error.js";

export const homeFlag = Flags.string({
  description: "gw home directory [default: $GW_HOME or ~/.gw]",
  helpGroup: "GLOBAL",
});

export const jsonFlag = Flags.boolean({
  description: "print the result as JSON (exactly the API body or the documented object) and nothing else on stdout",
  default: false,
});

export const apiKeyFlag = Flags.string({
  description: "gateway API key [default: $GW_API_KEY]",
  helpGroup: "GATEWAY",
});

export const baseUrlFlag = Flags.string({
  description: "gateway address [default: $GW_BASE_URL, else the home's server.host:server.port]",
  helpGroup: "GATEWAY",
});

/** A decimal number flag (oclif's integer flag refuses fractions). */
export const numberFlag = Flags.custom<number>({
  parse: async (input) => {
    const value = Number(input);
    if (input.trim() === "" || !Number.isFinite(value)) throw new UsageError(`expected a number, got "${input}"`);
    return value;
  },
});
