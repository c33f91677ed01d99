import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  color: string;
  values: (number | null)[];
  /** Drawn dashed (told apart without colour). */
  dash?: boolean;
}

/** uPlot is a chunk of its own, loaded the first time a chart is drawn. */
let uplotModule: Promise<typeof uPlot> | undefined;
function loadUplot(): Promise<typeof uPlot> {
  uplotModule ??= import('uplot').then((m) => m.default);
  return uplotModule;
}

/**
 * A time-series chart (uPlot on a canvas) that follows its container's width. Its figures are also
 * given as text by the page (a canvas says nothing to a screen reader).
 */
export function TimeChart({ title, times, series, unit, height = 180 }: { title: string; times: number[]; series: ChartSeries[]; unit: string; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | undefined>(undefined);
  const shape = series.map((s) => s.label).join('|');
  const data = [times.map((t) => t / 1000), ...series.map((s) => s.values)] as uPlot.AlignedData;
  // The newest data, for a chart made after its library has loaded.
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    let cancelled = false;
    let observer: ResizeObserver | undefined;
    void loadUplot().then((UPlot) => {
      if (cancelled || !box.current) return;
      const el = box.current;
      // The y axis as last drawn, on the box (for anyone inspecting the chart, and its tests).
      let drawn: { labels: string[]; size: number } = { labels: [], size: 0 };
      chart.current = new UPlot(
        {
          width: el.clientWidth || 600,
          height,
          cursor: { drag: { x: false, y: false } },
          legend: { show: true },
          scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
          axes: [
            { stroke: '#4a5361', grid: { stroke: '#e3e7ec' } },
            // The labels' room follows their length, so that "12.5 s" or "1,250 /s" is never cut on the left.
            {
              stroke: '#4a5361',
              grid: { stroke: '#e3e7ec' },
              size: (_u, values) => (drawn = { labels: values ?? [], size: axisSize(values) }).size,
              values: (_u, ticks) => tickLabels(ticks, unit),
            },
          ],
          hooks: {
            draw: [
              () => {
                el.dataset.yLabels = JSON.stringify(drawn.labels);
                el.dataset.ySize = String(drawn.size);
              },
            ],
          },
          series: [
            {},
            ...series.map((s) => ({
              label: s.label,
              stroke: s.color,
              width: 2,
              dash: s.dash ? [6, 4] : undefined,
              spanGaps: false,
              points: { show: (u: uPlot, i: number) => isolated(u.data[i]).length > 0, filter: (u: uPlot, i: number) => isolated(u.data[i]), size: 6, fill: s.color },
            })),
          ],
        },
        latest.current,
        el,
      );
      observer = new ResizeObserver(() => chart.current?.setSize({ width: el.clientWidth, height }));
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
      chart.current?.destroy();
      chart.current = undefined;
    };
  }, [shape, unit, height]);

  useEffect(() => {
    chart.current?.setData(data);
  }, [times, series]);

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-canvas" aria-hidden="true" />
    </figure>
  );
}

/**
 * The points of a series with no value on either side: a line cannot show them (a function called
 * in one slot only), so they are drawn as dots.
 */
function isolated(values: uPlot.AlignedData[number] | undefined): number[] {
  const found: number[] = [];
  if (!values) return found;
  for (let i = 0; i < values.length; i++) {
    if (values[i] == null) continue;
    if (values[i - 1] == null && values[i + 1] == null) found.push(i);
  }
  return found;
}

/**
 * The y axis's labels: durations in ms up to 1,000 ms, in seconds past it (a 30 s timeout reads
 * "30 s", not "30000 ms", which the axis cut to "000 ms"); other units as they are.
 */
export function tickLabels(ticks: number[], unit: string): string[] {
  if (unit === 'ms' && Math.max(...ticks.map(Math.abs)) >= 1000) return ticks.map((v) => `${trim(v / 1000)} s`);
  return ticks.map((v) => `${trim(v)} ${unit}`);
}

/** Room for the y axis: its longest label at the axis font (12 px, about 7 px a character), the tick and a gap. */
function axisSize(values: string[] | null): number {
  const longest = (values ?? []).reduce((n, label) => Math.max(n, label.length), 0);
  return Math.max(48, Math.ceil(longest * 7.5) + 18);
}

function trim(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : String(Number(v.toPrecision(2)));
}
