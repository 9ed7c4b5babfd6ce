// Prompts and other text arguments given as `-` are read from stdin.
import { CliError } from "./cli-error.js";

export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError("expected input on stdin (the argument was `-`), but stdin is a terminal");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** The argument itself, or stdin when it is `-` (one trailing newline removed). */
export async function textArgument(value: string, name = "input"): Promise<string> {
  const text = value === "-" ? (await readStdin()).replace(/\r?\n$/, "") : value;
  if (!text.trim()) throw new CliError(`${name} is empty`);
  return text;
}
