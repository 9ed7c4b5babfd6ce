// The background work's heartbeat (src/gateway/repeating-tick.ts): a tick that fails is handed to
// the error callback, never left as an unhandled rejection (which would end the server), and the
// ticks go on after it.
import test from "ava";
import { RepeatingTick } from "../src/gateway/repeating-tick.js";
import { eventually } from "./helpers/eventually.js";

test("a failing tick goes to onError and the next ticks still run", async (t) => {
  const schedule = new RepeatingTick();
  const errors: unknown[] = [];
  let ticks = 0;
  schedule.start(
    0.01,
    async () => {
      ticks += 1;
      if (ticks === 1) throw new Error("the state store failed: Redis videoJobs.active: no answer in time");
    },
    (error) => errors.push(error),
  );
  t.teardown(() => schedule.stop());
  t.true(schedule.running);
  await eventually(() => ticks >= 3, { what: "three ticks" });
  t.is(errors.length, 1);
  t.regex(String(errors[0]), /no answer in time/);
  schedule.stop();
  t.false(schedule.running);
});
