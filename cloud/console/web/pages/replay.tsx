// Replay of a recorded measurement: a play head that runs through it at 1× or 10× its recorded pace, and a
// timeline to scrub. The page makes the play head its cursor (the plot's line, the map's position) and, with a
// relative time range ("last 10 s"), slides the range so that it ends at the play head.
import { useEffect, useRef, useState } from "preact/hooks";
import { Section } from "../common";
import { fmtDuration } from "../format";
import { cursorTime } from "./plot";

const SPEEDS = [1, 10] as const;
/** How often the play head moves: often enough to look smooth, rarely enough not to re-render the page needlessly. */
const TICK_MS = 100;

export interface Replay {
  /** The play head (epoch seconds), or undefined before the first play or seek. */
  at: number | undefined;
  playing: boolean;
  speed: number;
  play(): void;
  pause(): void;
  setSpeed(speed: number): void;
  seek(t: number): void;
}

/** The replay state of a measurement spanning `start`..`end` (epoch seconds). */
export function useReplay(start: number, end: number): Replay {
  const [at, setAt] = useState<number | undefined>();
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState<number>(1);
  const head = useRef(at);
  head.current = at;
  useEffect(() => {
    if (!playing) return;
    // From the wall clock, not by counting ticks: a busy page's late timers must not slow the replay down.
    let from = head.current ?? start;
    let t0 = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      const next = Math.min(end, from + ((now - t0) / 1000) * speed);
      [from, t0] = [next, now];
      setAt(next);
      if (next >= end) setPlaying(false);
    }, TICK_MS);
    return () => clearInterval(timer);
  }, [playing, speed, start, end]);
  return {
    at,
    playing,
    speed,
    play: () => {
      // Played to the end: start again from the beginning.
      if (head.current === undefined || head.current >= end) setAt(start);
      setPlaying(true);
    },
    pause: () => setPlaying(false),
    setSpeed,
    seek: (t) => setAt(Math.min(end, Math.max(start, t))),
  };
}

/**
 * The data window to load and the range to show while a relative range of `last` seconds follows the play head:
 * the shown range ends at the head; the loaded window is twice as long and moves in steps of half a range, so the
 * page asks the server again only every half range of replayed time, not at every tick.
 */
export function followHead(head: number, last: number): { load: [number, number]; show: [number, number] } {
  const step = last / 2;
  const from = Math.floor((head - last) / step) * step;
  return { load: [from, from + 2 * last], show: [head - last, head] };
}

export function ReplayBar({ replay, start, end }: { replay: Replay; start: number; end: number }) {
  const span = Math.max(end - start, 0.001);
  const at = replay.at ?? start;
  return (
    <Section title="Replay">
      <div class="toolbar replay">
        <button
          type="button"
          onClick={replay.playing ? replay.pause : replay.play}
          aria-label={replay.playing ? "Pause replay" : "Play replay"}
        >
          {replay.playing ? "❚❚ Pause" : "▶ Play"}
        </button>
        <label>
          Speed{" "}
          <select
            value={String(replay.speed)}
            onChange={(e) => replay.setSpeed(Number((e.target as HTMLSelectElement).value))}
          >
            {SPEEDS.map((s) => (
              <option key={s} value={String(s)}>
                {s}×
              </option>
            ))}
          </select>
        </label>
        <input
          type="range"
          class="timeline"
          aria-label="Replay position"
          min={0}
          max={span}
          step={Math.min(0.1, span / 100)}
          value={at - start}
          aria-valuetext={cursorTime(at)}
          onInput={(e) => replay.seek(start + Number((e.target as HTMLInputElement).value))}
        />
        <output
          data-testid="replay-time"
          data-start={String(start)}
          data-at={replay.at === undefined ? "" : String(replay.at)}
        >
          {fmtDuration(at - start)} of {fmtDuration(span)}
        </output>
      </div>
      <p class="hint">
        Plays the recorded measurement: the plot's line and the map's position follow the play head; with a relative
        time range, the range slides with it.
      </p>
    </Section>
  );
}
