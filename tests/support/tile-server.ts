// A map tile server for tests: answers `/tiles/{z}/{x}/{y}.png` with a small solid-colour PNG and remembers what
// was asked, as an operator's own tile service would (the console must work without internet access).
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";

/** A `size`×`size` PNG of one colour (8-bit RGB, no filter), made with zlib alone. */
function solidPng(size: number, [r, g, b]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(zlib.crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => [r, g, b]).flat())]);
  const pixels = zlib.deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", pixels),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

export interface TileServer {
  /** The URL template to configure: `http://127.0.0.1:<port>/tiles/{z}/{x}/{y}.png`. */
  template: string;
  /** The tiles asked for, as [z, x, y]. */
  requested: Array<[number, number, number]>;
  close(): Promise<void>;
}

export async function startTileServer(colour: [number, number, number] = [200, 230, 200]): Promise<TileServer> {
  const png = solidPng(256, colour);
  const requested: Array<[number, number, number]> = [];
  const server = http.createServer((req, res) => {
    const m = /^\/tiles\/(\d+)\/(\d+)\/(\d+)\.png$/.exec(req.url ?? "");
    if (!m) return void res.writeHead(404).end();
    requested.push([Number(m[1]), Number(m[2]), Number(m[3])]);
    res.writeHead(200, { "content-type": "image/png", "content-length": png.length }).end(png);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    template: `http://127.0.0.1:${port}/tiles/{z}/{x}/{y}.png`,
    requested,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
