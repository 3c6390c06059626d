// @matrixai/quic is an optional native dependency with builds for linux-x64, darwin and win32 only (none
// for linux-arm64 or arm). Nothing imports the QUIC transports statically: they are loaded here when QUIC
// is configured, and a platform where the library cannot load gets a QuicUnavailableError, not a crash.
import type * as QuicClient from "./client.js";
import type * as QuicServer from "./server.js";

export class QuicUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`QUIC is not available on this platform (${process.platform}-${process.arch})`, { cause });
    this.name = "QuicUnavailableError";
  }
}

async function load<T>(importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (e) {
    // Only a library that does not load is "unavailable"; a fault in our own module stays what it is.
    const libraryLoads = await Promise.all([import("@matrixai/quic"), import("@matrixai/logger")]).then(
      () => true,
      () => false,
    );
    throw libraryLoads ? e : new QuicUnavailableError(e);
  }
}

export const loadQuicClient = (): Promise<typeof QuicClient> => load(() => import("./client.js"));
export const loadQuicServer = (): Promise<typeof QuicServer> => load(() => import("./server.js"));
