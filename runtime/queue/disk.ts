// The disk rule of `limit_data_storage: false`: the measurement stops once the disk holding the data
// directory is DISK_FULL_RATIO full, and accepting resumes below DISK_RESUME_RATIO (no flapping at the edge).
import { statfs } from "node:fs/promises";

export const DISK_FULL_RATIO = 0.9;
export const DISK_RESUME_RATIO = 0.85;

/** Fraction (0..1) of the file system holding `dir` that is in use. */
export async function diskUsage(dir: string): Promise<number> {
  const st = await statfs(dir);
  return st.blocks === 0 ? 0 : 1 - st.bavail / st.blocks;
}
