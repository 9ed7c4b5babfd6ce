// libvips does a picture's pixel work on threads of its own ("libvips worker", started as it needs
// them and then kept). On Linux they are put below the gateway's CPU priority, as the local
// engines are (engine-priority.ts): seconds of resampling then take the cores the event loop
// leaves idle instead of sharing them with it. Elsewhere, or if libvips names its threads
// otherwise, nothing changes.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { ENGINE_NICE_STEPS } from "./engine-priority.js";

const TASKS = "/proc/self/task";
const VIPS_THREAD = "libvips worker";
/** While local picture work runs, threads libvips starts meanwhile are found this often. */
const RESCAN_MS = 500;

let scanning = process.platform === "linux";
let running = 0;
let timer: NodeJS.Timeout | undefined;

/** Lower libvips's threads now and, until the returned function is called, those it starts later. */
export function lowerPictureThreads(): () => void {
  if (!scanning) return () => undefined;
  lowerNow();
  running += 1;
  timer ??= setInterval(lowerNow, RESCAN_MS).unref();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    // Those started since the last look, which a short run ends before.
    lowerNow();
    running -= 1;
    if (running === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

function lowerNow(): void {
  let tasks: string[];
  try {
    tasks = readdirSync(TASKS);
  } catch {
    scanning = false;
    return;
  }
  const target = Math.min(19, os.getPriority() + ENGINE_NICE_STEPS);
  for (const task of tasks) {
    try {
      if (readFileSync(`${TASKS}/${task}/comm`, "latin1").trimEnd() !== VIPS_THREAD) continue;
      // On Linux a nice value is a thread's: this lowers that one thread.
      const tid = Number(task);
      if (os.getPriority(tid) < target) os.setPriority(tid, target);
    } catch {
      // The thread ended meanwhile.
    }
  }
}
