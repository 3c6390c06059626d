// Compression as the published iSCP clients negotiate it (aptpod/iscp-go transport/negotiation.go,
// iscp-rs src/transport/negotiation.rs): `comp` (`per-message` or `context-takeover`), `clevel` (DEFLATE level)
// and `cwinbits` (context window, 2^cwinbits bytes), in the WebSocket URL query or the QUIC negotiation stream.
// iscp-go sends all three on every connect, `clevel=0` when compression is off; iscp-rs leaves them out then.

/** What a connection compresses with; absent when it does not compress. */
export interface CompressionParams {
  /** DEFLATE level 1..9. */
  level: number;
  /** Each message's DEFLATE stream starts with the last 2^windowBits bytes of the earlier messages as its dictionary. */
  contextTakeover: boolean;
  /** Context window bits (0..32, as iscp-go validates them); used only with contextTakeover. */
  windowBits: number;
}

/** The window used when a client asks for context takeover without `cwinbits` (zlib's largest). */
export const DEFAULT_WINDOW_BITS = 15;

const intIn = (s: string, lo: number, hi: number): number | undefined => {
  if (!/^\d{1,2}$/.test(s)) return undefined;
  const n = Number(s);
  return n >= lo && n <= hi ? n : undefined;
};

/**
 * Reads the compression parameters: `{params}` (undefined params: off), or `{error}` with a sentence for the refusal.
 * Level 0 or no level is off whatever `comp` says. `contextTakeover` applies only where `allowContextTakeover`
 * (WebSocket): on QUIC both clients compress every message alone.
 */
export function readCompression(
  get: (key: string) => string | undefined,
  allowContextTakeover: boolean,
): { params?: CompressionParams; error?: string } {
  const comp = get("comp");
  if (comp === undefined || comp === "") return {};
  if (comp !== "per-message" && comp !== "context-takeover")
    return { error: "comp must be per-message or context-takeover" };
  const levelText = get("clevel");
  const level = levelText === undefined || levelText === "" ? 0 : intIn(levelText, 0, 9);
  if (level === undefined) return { error: "clevel must be an integer from 0 to 9" };
  const winText = get("cwinbits");
  const windowBits = winText === undefined || winText === "" ? DEFAULT_WINDOW_BITS : intIn(winText, 0, 32);
  if (windowBits === undefined) return { error: "cwinbits must be an integer from 0 to 32" };
  if (level === 0) return {};
  return { params: { level, contextTakeover: allowContextTakeover && comp === "context-takeover", windowBits } };
}

/** The parameters a client sends for `c` (nothing when it does not compress, as iscp-rs does). */
export function compressionQuery(c: CompressionParams | undefined): Record<string, string> {
  if (!c || c.level === 0) return {};
  return c.contextTakeover
    ? { comp: "context-takeover", clevel: String(c.level), cwinbits: String(c.windowBits) }
    : { comp: "per-message", clevel: String(c.level) };
}
