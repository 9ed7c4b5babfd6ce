// A real redis-server (Debian's, installed by install.sh) for tests: its own temp dir, no
// persistence, listening on a unix socket only (no TCP port to collide with another test or a
// system Redis). Ready when it answers PING.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestFn } from "ava";
import { Redis } from "ioredis";

export interface TestRedis {
  /** The socket path, for `new Redis({ path })`. */
  socket: string;
  /** A new client of this server (closed by stop()). */
  client(): Redis;
  /** Hang the server (SIGSTOP), as a Redis that stops answering without closing its connections, and resume it (SIGCONT). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), "gw-redis-"));
  const socket = path.join(dir, "redis.sock");
  const server = spawn("redis-server", ["--port", "0", "--unixsocket", socket, "--dir", dir, "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  server.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  server.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const clients: Redis[] = [];
  const client = () => {
    const redis = new Redis({ path: socket, lazyConnect: false, maxRetriesPerRequest: 1 });
    clients.push(redis);
    return redis;
  };
  await untilAnswers(server, socket, () => output);
  return {
    socket,
    client,
    pause: () => server.kill("SIGSTOP"),
    resume: () => server.kill("SIGCONT"),
    async stop() {
      await Promise.all(clients.map((redis) => redis.quit().catch(() => redis.disconnect())));
      await stopProcess(server);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** PING until PONG; the server exiting first fails with what it printed. */
async function untilAnswers(server: ChildProcess, socket: string, output: () => string): Promise<void> {
  const exited = new Promise<never>((_, reject) =>
    server.once("exit", (code) => reject(new Error(`redis-server exited (${code}) before it answered: ${output()}`))),
  );
  exited.catch(() => undefined);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const probe = new Redis({ path: socket, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined);
    try {
      await Promise.race([probe.connect().then(() => probe.ping()), exited]);
      return;
    } catch (error) {
      if (server.exitCode !== null || Date.now() > deadline) throw error;
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopProcess(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGCONT"); // a paused server would not hear SIGTERM until resumed
  server.kill("SIGTERM");
  await exited;
}

/**
 * One redis-server for a test file: started before its tests, stopped after them. Each case takes
 * a key prefix of its own (`prefix()`), so cases sharing the server never meet.
 */
export function redisForTests(test: TestFn): { client(): Redis; prefix(): string } {
  let server: TestRedis | undefined;
  let prefixes = 0;
  test.before(async () => {
    server = await startRedis();
  });
  test.after.always(async () => {
    await server?.stop();
  });
  return {
    client() {
      if (!server) throw new Error("the test redis-server is not started yet (use it inside a test)");
      return server.client();
    },
    prefix: () => `t${prefixes++}:`,
  };
}
