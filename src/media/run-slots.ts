// A bounded number of engine processes at a time (ffmpeg, ffprobe, espeak-ng, tesseract are
// CPU-bound: more runs than cores only make every one of them slower). Waiters are served in
// order; one that gives up (its signal aborts) leaves the queue.

/** Returns `take`: wait for a free slot; the returned function gives it back (once). */
export function createRunSlots(max: number): (signal: AbortSignal | undefined) => Promise<() => void> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (signal) => {
    signal?.throwIfAborted();
    if (running < max) {
      running += 1;
    } else {
      // The slot is handed over by the run that ends, so `running` does not change here.
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const index = waiting.indexOf(wake);
          if (index !== -1) waiting.splice(index, 1);
          reject(signal!.reason);
        };
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        waiting.push(wake);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    };
  };
}
