import { Flags } from "@oclif/core";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { keyLimitFlags, keyLimitsFrom } from "../../src/cli/key-limit-flags.js";
import { keyPlanNotes } from "../../src/cli/key-plan-notes.js";
import { note, printLine } from "../../src/cli/output.js";
import { requirePlan } from "../../src/cli/plan-names.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { createKey, findAgent } from "../../src/store/provisioning.js";

export default class KeysCreate extends GwCommand {
  static override description =
    "Create an API key for an agent (the agent is created when missing). The key is shown once. A key may carry its own budget, expiry, model patterns and rate limits, on top of its agent's plan, and a lifetime for the response cache to keep its answers.";
  static override examples = [
    "export GW_API_KEY=$(<%= config.bin %> keys create --agent research)",
    "<%= config.bin %> keys create --agent research --plan pro --json",
    "<%= config.bin %> keys create --agent ci --name 'nightly batch' --budget 2000000 --expires 30d --models 'openai/*' --rpm 30 --tpm 50000",
    "<%= config.bin %> keys create --agent docs-bot --cache 1h",
  ];
  static override enableJsonFlag = true;
  static override flags = {
    agent: Flags.string({ description: "agent name (created when it does not exist)", required: true }),
    plan: Flags.string({ description: "plan for the agent (sets it on an existing agent) [default for a new agent: free]" }),
    ...keyLimitFlags,
    json: jsonFlag,
    ...remoteAdminFlags,
  };

  async run() {
    const { flags } = await this.parse(KeysCreate);
    const admin = remoteAdmin(flags);
    if (admin) {
      // The gateway checks the plan and the cache lifetime against its own config.
      const limits = keyLimitsFrom(flags, { now: new Date(), maxCacheTtlSeconds: Number.POSITIVE_INFINITY });
      const created = await remotely(() => admin.createKey(flags.agent, flags.plan, limits));
      const { key, ...listing } = created;
      return this.shown({ key, ...listing }, () => {
        printLine(key);
        note(`key ${created.prefix}… for agent "${created.agent}" (plan ${created.plan}); it is shown only this once`);
      });
    }
    const paths = await openHome(flags.home, { create: true });
    const config = await loadHomeConfig(paths);
    const plan = flags.plan === undefined ? undefined : requirePlan(config, flags.plan);
    const limits = keyLimitsFrom(flags, { now: new Date(), maxCacheTtlSeconds: config.cache.maxTtlSeconds });
    const { created, agentExisted } = await withMetadata(paths, async (store) => {
      // Read before the change, for the note only: a parallel create of the same agent makes it say "new" once too often.
      const agentExisted = findAgent(store.data, flags.agent) !== undefined;
      return { created: await createKey(store, flags.agent, plan, "free", limits), agentExisted };
    });
    const { record } = created;
    for (const line of keyPlanNotes(config, { agent: created.agent, key: record, agentCreatedOnDefaultPlan: !agentExisted && plan === undefined })) note(line);
    // {key, agent, plan} as ever; a key made with limits also shows its prefix and those limits.
    const withLimits = Object.keys(limits).length > 0;
    const shown = {
      key: created.key,
      agent: created.agent.name,
      plan: created.agent.plan,
      ...(withLimits
        ? {
            prefix: record.prefix,
            name: record.name ?? null,
            budget: record.budget ?? null,
            expiresAt: record.expiresAt ?? null,
            models: record.models ?? null,
            rpm: record.rpm ?? null,
            tpm: record.tpm ?? null,
            cacheTtlSeconds: record.cacheTtlSeconds ?? null,
          }
        : {}),
    };
    return this.shown(shown, () => {
      printLine(created.key);
      note(`key ${record.prefix}… for agent "${created.agent.name}" (plan ${created.agent.plan}); it is shown only this once`);
    });
  }
}
