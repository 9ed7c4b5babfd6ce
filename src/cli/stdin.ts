// Prompts and other text arguments given as `-` are read from stdin.
import { CliError } from "./cli-error.js";

export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError("expected input on stdin (the argument was `-`), but stdin is a terminal");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The bytes on stdin (an argument given as `-`), refused past `maxBytes`: they are held in memory.
 * `expected` and `named` word the refusals: "expected audio on stdin", "the audio on stdin is larger ...".
 */
export async function readStdinBytes(maxBytes: number, expected: string, named: string): Promise<Buffer> {
  if (process.stdin.isTTY) throw new CliError(`expected ${expected} on stdin (the argument was \`-\`), but stdin is a terminal`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > maxBytes) throw new CliError(`${named} on stdin is larger than the ${maxBytes / 1024 / 1024} MB the gateway accepts`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/** The argument itself, or stdin when it is `-` (one trailing newline removed). */
export async function textArgument(value: string, name = "input"): Promise<string> {
  const text = value === "-" ? (await readStdin()).replace(/\r?\n$/, "") : value;
  if (!text.trim()) throw new CliError(`${name} is empty`);
  return text;
}
