// Clients the peer itself owns (no user; the console's): registered at every start if missing, with
// their redirect URIs kept as the owning area gives them.
import type { Db } from "../../database/db.js";
import { clientsRepo, type ClientRecord } from "../repo/clients.js";

/** Inserts `record` when its client_id is unknown, else brings the stored redirect URIs in step with it. */
export async function ensureFixedClient(db: Db, record: ClientRecord): Promise<void> {
  await db.transaction(async (tx) => {
    const existing = await clientsRepo.get(tx, record.client_id);
    if (!existing) return void (await clientsRepo.insert(tx, record));
    const same =
      existing.redirect_uris.length === record.redirect_uris.length &&
      existing.redirect_uris.every((u, i) => u === record.redirect_uris[i]);
    if (!same)
      await clientsRepo.update(tx, record.client_id, { redirect_uris: record.redirect_uris }, record.updated_at);
  });
}
