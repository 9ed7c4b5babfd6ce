// src/text: the byte sizes and control-character helpers every layer shares, with plain equality.
import test from "ava";
import { exactSize, roundedSize } from "../src/text/byte-sizes.js";
import {
  hasControlCharacter,
  replaceC0AndC1Controls,
  replaceControlCharacters,
  withoutFileNameControls,
  withoutTerminalEscapes,
} from "../src/text/control-characters.js";

test("exactSize: a limit as it was set, in the largest unit that says it exactly", (t) => {
  t.is(exactSize(32 * 1024 * 1024), "32 MB");
  t.is(exactSize(64 * 1024), "64 KB");
  t.is(exactSize(1536), "1.5 KB");
  t.is(exactSize(2.5 * 1024 * 1024), "2.5 MB");
  t.is(exactSize(1024 ** 3), "1 GB");
  t.is(exactSize(1000), "1000 bytes");
  t.is(exactSize(50_000), "50000 bytes");
});

test("roundedSize: one decimal under 10 of a unit, none from 10 on; never 0 of a larger unit", (t) => {
  t.is(roundedSize(0), "0 B");
  t.is(roundedSize(1023), "1023 B");
  t.is(roundedSize(1536), "1.5 KB");
  t.is(roundedSize(50_000), "49 KB");
  t.is(roundedSize(614_400), "600 KB");
  t.is(roundedSize(100 * 1024 * 1024), "100 MB");
  t.is(roundedSize(5 * 1024 ** 3), "5 GB");
});

test("control characters: found by a stateless test, replaced or dropped", (t) => {
  // Called twice on purpose: a global regex used with .test() would answer false the second time.
  t.true(hasControlCharacter("a\nb"));
  t.true(hasControlCharacter("a\nb"));
  t.true(hasControlCharacter("\u007f"));
  t.false(hasControlCharacter("caf\u00e9 \u0085"));
  t.is(replaceControlCharacters("a\u0000b\u001fc\u007fd\u0085", "_"), "a_b_c_d\u0085");
  t.is(replaceC0AndC1Controls("a\tb\u0085c", " "), "a b c");
  t.is(withoutFileNameControls("invoice\u202Etxt.exe\u0007"), "invoicetxt.exe");
  t.is(withoutTerminalEscapes("\u001b[31mred\u001b[0m \u001b]0;title\u0007done \u009b2Jx"), "red done x");
});
