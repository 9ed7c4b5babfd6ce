// `gw usage` range flags (docs/decisions.md §17): a --period, --since or --until value that is not
// of its form, or a range that is empty, is a usage error, exit 2 like every other flag value of
// the wrong form; a name the home does not have is a failure, exit 1.
import test from "ava";
import { gw, makeHome } from "./helpers/gateway-harness.js";

let home: string;

test.before(async () => {
  home = await makeHome();
});

const usageErrors: Array<[string[], RegExp]> = [
  [["--period", "2025-13"], /--period "2025-13": expected YYYY-MM/],
  [["--period", "March"], /--period "March": expected YYYY-MM/],
  [["--since", "2025-02-30"], /--since "2025-02-30" is not a calendar date/],
  [["--since", "last tuesday"], /--since "last tuesday": expected a date \(YYYY-MM-DD\) or an ISO 8601 time/],
  [["--until", "2025-03-01T25:00:00Z"], /--until "2025-03-01T25:00:00Z": expected/],
  [["--since", "2025-03-10", "--until", "2025-03-09"], /is not before --until .*: the range is empty/],
];

for (const [args, message] of usageErrors) {
  test(`gw usage ${args.join(" ")}: exit 2 with the message, nothing on stdout`, async (t) => {
    const result = await gw(["usage", ...args], { home });
    t.is(result.code, 2, result.stderr);
    t.regex(result.stderr, message);
    t.is(result.stdout, "");
  });
}

test("gw usage with a good range but an agent the home does not have: exit 1", async (t) => {
  const result = await gw(["usage", "--period", "2025-03", "--agent", "nobody"], { home });
  t.is(result.code, 1, result.stderr);
  t.regex(result.stderr, /no agent "nobody"/);
});
