// Issuing and revoking tokens: access tokens (JWT), refresh tokens (opaque, rotated, in families).
import crypto from "node:crypto";
import type { Db } from "../../database/db.js";
import { OAuthError } from "../service/oauth-errors.js";
import { grantsRepo } from "../repo/grants.js";
import { generateSecret, hashSecret } from "../service/secrets.js";
import { signAccessToken, type SubjectKind } from "./access-token.js";
import type { Denylist } from "./denylist.js";
import type { KeyStore } from "./keystore.js";

export interface TokenSubject {
  kind: SubjectKind;
  uuid: string;
}

export interface IssueInput {
  subject: TokenSubject;
  clientId: string;
  scopes: readonly string[];
  restricted?: "password_change";
}

export interface IssuedAccessToken {
  access_token: string;
  jti: string;
  expires_in: number;
  /** Unix seconds. */
  exp: number;
}

/** The token endpoint's JSON body (the spec's Token response). */
export interface TokenResponse {
  token_type: "bearer";
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  refresh_token_expires_in?: number;
  scope: string;
}

/** A password-change-only token carries `temporary` as its scope (the intdash convention). */
export const scopeString = (input: IssueInput) => (input.restricted ? "temporary" : input.scopes.join(" "));

export class TokenIssuer {
  constructor(
    private readonly db: Db,
    private readonly keys: KeyStore,
    private readonly denylist: Denylist,
    private readonly settings: { issuer: () => string; accessTtl: () => number; refreshTtl: () => number },
  ) {}

  issueAccessToken(input: IssueInput): IssuedAccessToken {
    const iat = Math.floor(Date.now() / 1000);
    const ttl = this.settings.accessTtl();
    const jti = crypto.randomUUID();
    const claims = {
      iss: this.settings.issuer(),
      sub: input.subject.uuid,
      sub_kind: input.subject.kind,
      client_id: input.clientId,
      scope: scopeString(input),
      iat,
      exp: iat + ttl,
      jti,
      ...(input.restricted ? { restricted: input.restricted } : {}),
    };
    return { access_token: signAccessToken(this.keys, claims), jti, expires_in: ttl, exp: iat + ttl };
  }

  /** Access token plus a new refresh token in `familyId` (a new family when omitted). */
  async issueWithRefresh(input: IssueInput, familyId: string = crypto.randomUUID()): Promise<TokenResponse> {
    const at = this.issueAccessToken(input);
    const refresh = generateSecret();
    const now = Math.floor(Date.now() / 1000);
    const refreshTtl = this.settings.refreshTtl();
    await grantsRepo.insertRefresh(this.db, {
      digest: hashSecret(refresh),
      family_id: familyId,
      client_id: input.clientId,
      subject_kind: input.subject.kind,
      subject_uuid: input.subject.uuid,
      scope: input.scopes.join(" "),
      restricted: input.restricted ?? null,
      access_jti: at.jti,
      access_expires_at: at.exp,
      expires_at: now + refreshTtl,
      created_at: now,
    });
    // A replay may have revoked the family while this token was being made: then it dies too.
    if (await grantsRepo.familyRevoked(this.db, familyId)) {
      await this.revokeFamily(familyId);
      throw new OAuthError("invalid_grant", "the grant was revoked while the token was being issued");
    }
    return {
      token_type: "bearer",
      access_token: at.access_token,
      expires_in: at.expires_in,
      refresh_token: refresh,
      refresh_token_expires_in: refreshTtl,
      scope: scopeString(input),
    };
  }

  /** Revokes every refresh token of a family and denylists the access tokens it issued. */
  // (Never call inside a Db transaction: the denylist writes through the same serialised connection.)
  async revokeFamily(familyId: string): Promise<void> {
    const alive = await grantsRepo.revokeFamily(this.db, familyId, Math.floor(Date.now() / 1000));
    await this.denylist.add(alive);
  }
}
