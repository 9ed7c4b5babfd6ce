// oclif `command_not_found` hook (package.json oclif.hooks): a mistyped command run from a script
// or CI, where stdin is not a terminal, says what it probably meant and exits 127 without waiting.
// On a terminal it leaves the question ("Did you mean ...? Y/n") to @oclif/plugin-not-found,
// whose own hook runs beside this one; off a terminal that plugin names no command.
// oclif runs both hooks at once and exits on the first failure; this module imports nothing heavy,
// so it loads and fails before the plugin's (which loads a prompt library).
import type { Hook } from "@oclif/core";
import { closestCommandId } from "./command-suggestion.js";

const COMMAND_NOT_FOUND_EXIT = 127;

const hook: Hook.CommandNotFound = async function (options) {
  if (process.stdin.isTTY) return;
  const { config, id } = options;
  const shown = (commandId: string) => commandId.split(":").join(config.topicSeparator);
  const commands = config.commands.filter((command) => !command.hidden);
  const knownIds = [
    ...commands.map((command) => command.id),
    ...commands.flatMap((command) => command.aliases),
    ...config.topics.filter((topic) => !topic.hidden).map((topic) => topic.name),
  ];
  const guess = closestCommandId(id, knownIds);
  const topic = config.findTopic(id.split(":")[0] ?? "");
  const help = topic ? `${config.bin} help ${shown(topic.name)}` : `${config.bin} help`;
  const suggestion = guess ? ` Did you mean "${shown(guess)}"?` : "";
  // Written as plain lines rather than an oclif error, which would wrap them mid-sentence.
  process.stderr.write(`"${shown(id)}" is not a ${config.bin} command.${suggestion}\nRun \`${help}\` to see the commands.\n`);
  this.exit(COMMAND_NOT_FOUND_EXIT);
};

export default hook;
