/** Rows as aligned columns (the first row is the header), two spaces apart. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** A split as words: `4 (90%), 5 (10%)`, or `4` alone. */
export function trafficText(traffic: { version: number; percent: number }[] | undefined): string {
  if (!traffic || traffic.length === 0) return '-';
  if (traffic.length === 1) return String(traffic[0]!.version);
  return traffic.map((s) => `${s.version} (${s.percent}%)`).join(', ');
}
