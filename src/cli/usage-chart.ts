// A bar chart for the terminal, readable without colour: a label column, bars of one plain block
// character scaled so the largest value fills the room left, and the values right-aligned.
export interface Bar {
  label: string;
  value: number;
}

const BLOCK = "█";
const ELLIPSIS = "…";
/** Narrower than this and the bars say nothing; the lines are allowed to overflow instead. */
const MIN_BAR_WIDTH = 10;

/**
 * One line per bar, each exactly `width` characters when it fits: the label, a space, the bar
 * padded to the bar column, a space, the value. A value above zero always shows at least one block.
 */
export function barChart(bars: Bar[], width: number, format: (value: number) => string): string[] {
  if (bars.length === 0) return [];
  const maxLabel = Math.max(8, Math.floor(width * 0.4));
  const labels = bars.map((bar) => (bar.label.length > maxLabel ? `${bar.label.slice(0, maxLabel - 1)}${ELLIPSIS}` : bar.label));
  const values = bars.map((bar) => format(bar.value));
  const labelWidth = Math.max(...labels.map((label) => label.length));
  const valueWidth = Math.max(...values.map((value) => value.length));
  const barWidth = Math.max(MIN_BAR_WIDTH, width - labelWidth - valueWidth - 2);
  const largest = Math.max(...bars.map((bar) => bar.value));
  return bars.map((bar, index) => {
    const length = bar.value > 0 ? Math.max(1, Math.round((bar.value / largest) * barWidth)) : 0;
    return `${labels[index]!.padEnd(labelWidth)} ${BLOCK.repeat(length).padEnd(barWidth)} ${values[index]!.padStart(valueWidth)}`;
  });
}

/** $COLUMNS when set to a number, else the terminal's width, else (a pipe, a file) 80. */
export function terminalColumns(env: NodeJS.ProcessEnv, stdout: { isTTY?: boolean; columns?: number }): number {
  const fromEnv = Number(env.COLUMNS);
  if (env.COLUMNS && /^\d+$/.test(env.COLUMNS.trim()) && fromEnv > 0) return fromEnv;
  if (stdout.isTTY && stdout.columns && stdout.columns > 0) return stdout.columns;
  return 80;
}
