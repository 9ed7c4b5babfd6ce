// The gateway keeps the CPU for its event loop while local media work runs: engines it spawns run
// below its own priority (engine-priority.ts), and so do libvips's pixel threads once a local
// picture engine has used them (picture-threads.ts). Linux only: elsewhere both are no-ops.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import test from "ava";
import sharp from "sharp";
import { runEngine } from "../src/media/audio-process.js";
import { ENGINE_NICE_STEPS } from "../src/media/engine-priority.js";
import { createLocalImages } from "../src/providers/local/local-images.js";

const linux = process.platform === "linux" ? test : test.skip;
const lowered = Math.min(19, os.getPriority() + ENGINE_NICE_STEPS);

linux("an engine run is started below the gateway's priority", async (t) => {
  const own = os.getPriority();
  // The shell reads stdin first, which the gateway writes only after lowering it: no race.
  const stat = await runEngine("ffmpeg", "/bin/sh", ["-c", "read line; exec cat /proc/self/stat"], { stdin: Buffer.from("go\n"), timeoutMs: 30_000 });
  const fields = stat.toString("latin1").split(") ")[1]!.split(" ");
  // Field 19 of /proc/<pid>/stat, the 17th after the command name.
  t.is(Number(fields[16]), lowered);
  // Only the engine: the gateway keeps its own.
  t.is(os.getPriority(), own);
});

linux("libvips's threads run below the event loop once a local picture engine has run", async (t) => {
  const mainPriority = os.getPriority();
  const picture = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#3366cc" } })
    .png()
    .toBuffer();
  const result = await createLocalImages("local").upscale!(
    { model: "lanczos", image: { bytes: picture, mediaType: "image/png" }, scale: 2, outputFormat: "png" },
    { signal: new AbortController().signal },
  );
  t.is((await sharp(result.images[0]!.bytes).metadata()).width, 1600);
  const vipsThreads = readdirSync("/proc/self/task").filter((task) => readFileSync(`/proc/self/task/${task}/comm`, "latin1").trimEnd() === "libvips worker");
  t.true(vipsThreads.length > 0);
  for (const task of vipsThreads) t.is(os.getPriority(Number(task)), lowered, `thread ${task}`);
  // The event loop's own thread keeps its priority.
  t.is(os.getPriority(), mainPriority);
});
