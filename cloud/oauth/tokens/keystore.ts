// Signing keys: the newest unsuperseded key signs; all published keys verify and appear in the JWKS.
// Keys are cached in memory (signing must not touch the database) and reloaded now and then so a
// `cloud-peer keys rotate` run against the same database is picked up without a restart (at once with
// --nats: the rotating process sends a notice and every peer reloads).
import crypto from "node:crypto";
import { calculateJwkThumbprint, type JWK } from "jose";
import type { Db, Queryable } from "../../database/db.js";
import { keysRepo, type SigningKeyRow } from "../repo/keys.js";

export const SIGNING_ALG = "ES256";
/** How often a running peer looks for keys rotated by another process. */
export const KEY_RELOAD_MS = 30_000;

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: crypto.KeyObject;
  /** base64url of the JWS protected header, computed once per key. */
  headerB64: string;
}

export interface KeySet {
  signing: SigningKey;
  verifying: Map<string, crypto.KeyObject>;
  jwks: { keys: JWK[] };
}

/** generateKeyPairSync with JWK encodings (Node takes them; its typings list only PEM and DER). */
const generateJwkPair = crypto.generateKeyPairSync as unknown as (
  type: "ec",
  options: object,
) => { publicKey: crypto.JsonWebKey; privateKey: crypto.JsonWebKey };

export async function newKeyRow(): Promise<SigningKeyRow> {
  // Encoded as JWKs by the generation itself, never through KeyObjects: Node 20 can deadlock exporting a JWK from a
  // key whose generation job the garbage collector finalises during the export (both lock the key's mutex).
  const { privateKey, publicKey } = generateJwkPair("ec", {
    namedCurve: "P-256",
    publicKeyEncoding: { format: "jwk" },
    privateKeyEncoding: { format: "jwk" },
  });
  const pub = publicKey as JWK;
  const kid = await calculateJwkThumbprint(pub, "sha256");
  const publicJwk = { kty: pub.kty, crv: pub.crv, x: pub.x, y: pub.y, kid, alg: SIGNING_ALG, use: "sig" };
  return {
    kid,
    alg: SIGNING_ALG,
    private_jwk: JSON.stringify(privateKey),
    public_jwk: JSON.stringify(publicJwk),
    created_at: new Date().toISOString(),
    superseded_at: null,
    retire_after: null,
  };
}

/** Adds a new signing key; the previous ones stay published for `keepSeconds`. */
export async function rotateKeys(db: Db, keepSeconds: number): Promise<SigningKeyRow> {
  const row = await newKeyRow();
  await db.transaction(async (tx) => {
    const now = new Date();
    await keysRepo.supersedeCurrent(tx, now, new Date(now.getTime() + keepSeconds * 1000));
    await keysRepo.insert(tx, row);
    await keysRepo.deleteRetired(tx, now);
  });
  return row;
}

function toKeySet(rows: SigningKeyRow[]): KeySet | undefined {
  const current = rows.find((r) => r.superseded_at === null) ?? rows[0];
  if (!current) return undefined;
  const verifying = new Map<string, crypto.KeyObject>();
  const keys: JWK[] = [];
  for (const r of rows) {
    const pub = JSON.parse(r.public_jwk) as JWK;
    verifying.set(r.kid, crypto.createPublicKey({ key: pub as crypto.JsonWebKey, format: "jwk" }));
    keys.push(pub);
  }
  const header = { alg: current.alg, typ: "at+jwt", kid: current.kid };
  return {
    signing: {
      kid: current.kid,
      alg: current.alg,
      privateKey: crypto.createPrivateKey({ key: JSON.parse(current.private_jwk) as crypto.JsonWebKey, format: "jwk" }),
      headerB64: Buffer.from(JSON.stringify(header)).toString("base64url"),
    },
    verifying,
    jwks: { keys },
  };
}

/** Margin on top of the access-token lifetime before a superseded key leaves the JWKS. */
const RETIRE_MARGIN_S = 60;

export class KeyStore {
  private set!: KeySet;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: Db,
    private readonly accessTtl: () => number,
    private readonly onRotated: () => void,
  ) {}

  /** Loads the keys, creating the first one on an empty database. */
  static async open(db: Db, accessTtl: () => number = () => 3600, onRotated: () => void = () => {}): Promise<KeyStore> {
    const store = new KeyStore(db, accessTtl, onRotated);
    let rows = await keysRepo.published(db);
    if (!rows.length) {
      await keysRepo.insert(db, await newKeyRow());
      rows = await keysRepo.published(db);
    }
    store.set = toKeySet(rows)!;
    return store;
  }

  get signing(): SigningKey {
    return this.set.signing;
  }
  get jwks(): { keys: JWK[] } {
    return this.set.jwks;
  }
  verifyingKey(kid: string): crypto.KeyObject | undefined {
    return this.set.verifying.get(kid);
  }

  async reload(db: Queryable = this.db): Promise<void> {
    const next = toKeySet(await keysRepo.published(db));
    if (!next) return;
    const previous = this.set?.signing.kid;
    if (previous && previous !== next.signing.kid) {
      // This peer signed with the superseded key until now, and its token lifetime may be longer than
      // the one the rotating process assumed: keep the key published until those tokens expire.
      await keysRepo.keepPublishedUntil(
        db,
        previous,
        new Date(Date.now() + (this.accessTtl() + RETIRE_MARGIN_S) * 1000),
      );
    }
    this.set = next;
  }

  async rotate(keepSeconds: number): Promise<string> {
    const row = await rotateKeys(this.db, keepSeconds);
    await this.reload();
    this.onRotated();
    return row.kid;
  }

  startReloading(onError: (err: unknown) => void): void {
    this.timer = setInterval(() => this.reload().catch(onError), KEY_RELOAD_MS);
    this.timer.unref();
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
