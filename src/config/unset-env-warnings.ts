// The server's warning about `${NAME}` variables the environment does not set: once per variable
// for the life of the process (one Gateway), at start or at the first reload that uses it, not
// on every reload. The environment does not change under a running process, so saying it again
// would only bury other lines.
import { describeUnsetVariable, unsetEnvVariables } from "./env-references.js";
import type { Config } from "./resolved-config.js";

export class UnsetEnvWarnings {
  private readonly warned = new Set<string>();

  constructor(private readonly warn: (message: string) => void) {}

  /** Warn about the config's unset variables not warned about before. */
  report(config: Pick<Config, "envVariables">): void {
    for (const use of unsetEnvVariables(config.envVariables)) {
      if (this.warned.has(use.name)) continue;
      this.warned.add(use.name);
      this.warn(`config: ${describeUnsetVariable(use)}`);
    }
  }
}
