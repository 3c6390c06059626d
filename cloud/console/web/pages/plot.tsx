// A uPlot chart of several series on one time axis. Each series has its own value scale, so a speed in km/h
// and an engine's rpm both fill the height: the first series' axis is on the left and the second's on the
// right, each in its series' colour; the legend reads every value at the cursor, and the cursor's time to the
// millisecond. Dragging across it selects a range to zoom into (the page then asks the server for that finer
// slice).
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface PlotSeries {
  label: string;
  /** Epoch seconds, ascending. */
  times: number[];
  values: number[];
}

const COLORS = ["#1f6fd1", "#d1401f", "#2a9d4b", "#8e44ad", "#c98a00", "#00838f", "#b0306a", "#5d6d7e"];

/** One x column for all series (the union of their times), each series null where it has no point. */
export function align(series: PlotSeries[]): uPlot.AlignedData {
  const xs = [...new Set(series.flatMap((s) => s.times))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = series.map((s) => {
    const col: (number | null)[] = new Array(xs.length).fill(null);
    s.times.forEach((t, i) => (col[index.get(t)!] = s.values[i]!));
    return col;
  });
  return [xs, ...ys] as uPlot.AlignedData;
}

/** The value axis as wide as its longest label (uPlot's fixed default cuts `10,000` to `0,000`). */
const valueAxisSize: uPlot.Axis.Size = (u, values, axisIdx, cycleNum) => {
  const axis = u.axes[axisIdx]!;
  // uPlot sizes axes in a few passes; after the second, keep what was found.
  if (cycleNum > 1) return (axis as { _size?: number })._size ?? 50;
  const longest = (values ?? []).reduce((a, v) => (v.length > a.length ? v : a), "");
  u.ctx.font = Array.isArray(axis.font) ? String(axis.font[0]) : "12px system-ui";
  return (
    Math.ceil((axis.ticks?.size ?? 10) + (axis.gap ?? 5) + u.ctx.measureText(longest).width / devicePixelRatio) + 4
  );
};

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
/** The cursor's time in local time, to the millisecond (a 100 Hz series needs more than minutes). */
export function cursorTime(epochSeconds: number | null | undefined): string {
  if (epochSeconds == null) return "—";
  const d = new Date(Math.round(epochSeconds * 1000));
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A value axis on the left (the first series) or the right (the second), in the series' colour. */
function valueAxis(scale: string, side: 1 | 3, color: string): uPlot.Axis {
  return { scale, side, size: valueAxisSize, stroke: color, ...(side === 1 ? { grid: { show: false } } : {}) };
}

const MARKER_COLOR = "#e6007e";

/** The marker's vertical line over the plotting area, when its time is on the axis. */
function drawMarker(u: uPlot, t: number | undefined): void {
  if (t === undefined) return;
  const x = u.valToPos(t, "x", true);
  const { left, top, width, height } = u.bbox;
  if (!(x >= left && x <= left + width)) return;
  u.ctx.save();
  u.ctx.strokeStyle = MARKER_COLOR;
  u.ctx.lineWidth = 2 * devicePixelRatio;
  u.ctx.beginPath();
  u.ctx.moveTo(x, top);
  u.ctx.lineTo(x, top + height);
  u.ctx.stroke();
  u.ctx.restore();
}

export function Plot({
  series,
  range,
  onZoom,
  onCursor,
  marker,
  label,
}: {
  series: PlotSeries[];
  range: [number, number];
  onZoom(r: [number, number]): void;
  onCursor?(t: number | undefined): void;
  /** A time drawn as a vertical line across the plot (the replay's play head). */
  marker?: number;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const zoom = useRef(onZoom);
  zoom.current = onZoom;
  const cursorTo = useRef(onCursor);
  cursorTo.current = onCursor;
  const rangeNow = useRef(range);
  rangeNow.current = range;
  const markerNow = useRef(marker);
  markerNow.current = marker;
  const key = series.map((s) => s.label).join("\n");

  useEffect(() => {
    const el = box.current!;
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth),
      height: 360,
      series: [
        { value: (_u, v) => cursorTime(v) },
        ...series.map((s, i) => ({
          label: s.label,
          scale: `y${i}`,
          stroke: COLORS[i % COLORS.length],
          width: 1.5,
          spanGaps: true,
          points: { show: false },
        })),
      ],
      scales: { x: { time: true, range: () => rangeNow.current } },
      axes: [{}, ...series.slice(0, 2).map((_s, i) => valueAxis(`y${i}`, i === 0 ? 3 : 1, COLORS[i]!))],
      cursor: { drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        draw: [(u) => drawMarker(u, markerNow.current)],
        // The time under the cursor, for the panels that follow it (the map's position).
        setCursor: [(u) => cursorTo.current?.(u.cursor.idx == null ? undefined : (u.data[0][u.cursor.idx] as number))],
        setSelect: [
          (u) => {
            if (u.select.width < 3) return;
            const r: [number, number] = [
              u.posToVal(u.select.left, "x"),
              u.posToVal(u.select.left + u.select.width, "x"),
            ];
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            zoom.current(r);
          },
        ],
      },
    };
    const u = new uPlot(opts, align(series), el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: 360 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
    };
  }, [key]);

  useEffect(() => {
    plot.current?.setData(align(series), true);
  }, [series]);
  // A new range (a replay's sliding window) rescales the time axis; the data stay.
  useEffect(() => {
    plot.current?.setScale("x", { min: range[0], max: range[1] });
  }, [range[0], range[1]]);
  useEffect(() => {
    plot.current?.redraw(false);
  }, [marker]);

  return <div class="plot" ref={box} role="img" aria-label={label} />;
}
