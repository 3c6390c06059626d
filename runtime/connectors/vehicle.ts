// A vehicle on a test track, for the demo and the console: what a measurement team's logger records, at
// realistic rates. Deterministic (a function of the time since start and a small state), so a test can
// check what a stream carries.
//   gnss/position        json {lat, lon, alt, heading}   10 Hz
//   vehicle/speed        float64 km/h                     50 Hz
//   vehicle/engine_rpm   float64 1/min                    50 Hz
//   imu/acc_x, _y, _z    float64 m/s² (longitudinal, lateral, vertical)  100 Hz
//   engine/coolant_temp  float64 °C                       1 Hz
//   can/0x1A0            bytes: 8-byte CAN frame (rpm u16, speed×100 u16, gear, throttle %, counter, checksum)  20 Hz
//   log/event            string: gear changes, laps       when they happen
// Numbers are big-endian, as iSCP v2 carries them.

export interface VehiclePoint {
  type: string;
  name: string;
  payload: Buffer;
}

/** The track: an ellipse around a point, its length in metres (Ramanujan's approximation). */
const CENTRE = { lat: 35.0421, lon: 137.1534 };
const A = 700; // semi-axis east-west, m
const B = 320; // semi-axis north-south, m
const TRACK_M = Math.PI * (3 * (A + B) - Math.sqrt((3 * A + B) * (A + 3 * B)));
const M_PER_DEG_LAT = 111_320;
const M_PER_DEG_LON = M_PER_DEG_LAT * Math.cos((CENTRE.lat * Math.PI) / 180);
const GEAR_UP_KMH = [0, 20, 38, 58, 80, 104];

const STREAMS: Array<{ hz: number; make: (s: VehicleSim, t: number) => VehiclePoint[] }> = [
  { hz: 10, make: (s, t) => [s.position(t)] },
  { hz: 50, make: (s, t) => [f64("vehicle/speed", s.speedKmh(t)), f64("vehicle/engine_rpm", s.rpm(t))] },
  { hz: 100, make: (s, t) => s.imu(t) },
  { hz: 1, make: (_s, t) => [f64("engine/coolant_temp", 20 + 68 * (1 - Math.exp(-t / 150)) + 1.5 * Math.sin(t / 9))] },
  { hz: 20, make: (s, t) => [s.canFrame(t)] },
];

const gearFor = (kmh: number) => Math.max(1, GEAR_UP_KMH.filter((g) => kmh >= g).length);

function f64(name: string, v: number): VehiclePoint {
  const payload = Buffer.allocUnsafe(8);
  payload.writeDoubleBE(v);
  return { type: "float64", name, payload };
}

const text = (type: string, name: string, s: string): VehiclePoint => ({ type, name, payload: Buffer.from(s, "utf8") });

/** The simulation: speed over time, the distance driven integrated from it, gears and laps as events. */
export class VehicleSim {
  private distance = 0;
  private lastT = 0;
  private gear = 1;
  private lap = 0;
  private lapStart = 0;
  private canCounter = 0;
  private readonly events: VehiclePoint[] = [];
  /** How many points of each stream were made: the next is due at n / hz (no drift from adding 1 / hz). */
  private readonly made = STREAMS.map(() => 0);

  /** Speed: accelerating away, then a lap rhythm of straights and corners. */
  speedKmh(t: number): number {
    const cruise = 72 + 28 * Math.sin((2 * Math.PI * t) / 47) + 9 * Math.sin((2 * Math.PI * t) / 13);
    return Math.max(0, Math.min(1, t / 12) * cruise);
  }

  rpm(t: number): number {
    const v = this.speedKmh(t);
    return v < 1 ? 850 : 1750 + ((v - GEAR_UP_KMH[gearFor(v) - 1]!) / 24) * 3200;
  }

  /** Every point due up to `t` seconds after the start, in time order (the simulation steps through them). */
  advance(t: number): Array<VehiclePoint & { t: number }> {
    const out: Array<VehiclePoint & { t: number }> = [];
    for (;;) {
      const dueAt = (k: number) => this.made[k]! / STREAMS[k]!.hz;
      let i = 0;
      for (let k = 1; k < STREAMS.length; k++) if (dueAt(k) < dueAt(i)) i = k;
      const at = dueAt(i);
      if (at > t) return out;
      this.step(at);
      for (const p of STREAMS[i]!.make(this, at)) out.push({ ...p, t: at });
      for (const e of this.events.splice(0)) out.push({ ...e, t: at });
      this.made[i]!++;
    }
  }

  /** Integrates the distance to `t` and notes gear changes and laps. */
  private step(t: number): void {
    if (t <= this.lastT) return;
    this.distance += ((this.speedKmh(t) + this.speedKmh(this.lastT)) / 2 / 3.6) * (t - this.lastT);
    this.lastT = t;
    const v = this.speedKmh(t);
    const gear = gearFor(v);
    if (gear !== this.gear) {
      this.events.push(text("string", "log/event", `gear ${this.gear} → ${gear} at ${v.toFixed(0)} km/h`));
      this.gear = gear;
    }
    const lap = Math.floor(this.distance / TRACK_M);
    if (lap > this.lap) {
      this.events.push(text("string", "log/event", `lap ${lap} in ${(t - this.lapStart).toFixed(1)} s`));
      this.lap = lap;
      this.lapStart = t;
    }
  }

  /** The angle on the ellipse after `distance` metres (uniform in angle is close enough for a demo). */
  private angle(): number {
    return (2 * Math.PI * (this.distance % TRACK_M)) / TRACK_M;
  }

  position(t: number): VehiclePoint {
    const a = this.angle();
    const east = A * Math.cos(a);
    const north = B * Math.sin(a);
    const heading = (Math.atan2(A * -Math.sin(a), B * Math.cos(a)) * 180) / Math.PI; // compass heading of travel
    const json = {
      lat: +(CENTRE.lat + north / M_PER_DEG_LAT).toFixed(7),
      lon: +(CENTRE.lon + east / M_PER_DEG_LON).toFixed(7),
      alt: +(52 + 3 * Math.sin(a * 2) + 0.2 * Math.sin(t * 3)).toFixed(2),
      heading: +((heading + 360) % 360).toFixed(1),
    };
    return text("json", "gnss/position", JSON.stringify(json));
  }

  imu(t: number): VehiclePoint[] {
    const dt = 0.05;
    const accel = (this.speedKmh(t + dt) - this.speedKmh(t - dt)) / 3.6 / (2 * dt);
    const v = this.speedKmh(t) / 3.6;
    // Curvature of the ellipse at the current angle gives the lateral acceleration v²·κ.
    const a = this.angle();
    const kappa = (A * B) / (A * A * Math.sin(a) ** 2 + B * B * Math.cos(a) ** 2) ** 1.5;
    const vibration = (k: number) => 0.15 * Math.sin(t * 157 + k) + 0.08 * Math.sin(t * 311 + 2 * k);
    return [
      f64("imu/acc_x", accel + vibration(1)),
      f64("imu/acc_y", v * v * kappa + vibration(2)),
      f64("imu/acc_z", 9.81 + vibration(3)),
    ];
  }

  canFrame(t: number): VehiclePoint {
    const f = Buffer.alloc(8);
    f.writeUInt16BE(Math.round(this.rpm(t)), 0);
    f.writeUInt16BE(Math.round(this.speedKmh(t) * 100), 2);
    f.writeUInt8(gearFor(this.speedKmh(t)), 4);
    f.writeUInt8(Math.round(Math.max(0, Math.min(100, 35 + 40 * Math.sin((2 * Math.PI * t) / 47 + 1)))), 5);
    f.writeUInt8(this.canCounter++ & 0xff, 6);
    let sum = 0;
    for (let i = 0; i < 7; i++) sum += f[i]!;
    f.writeUInt8(sum & 0xff, 7);
    return { type: "bytes", name: "can/0x1A0", payload: f };
  }
}
