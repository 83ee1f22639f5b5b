/** The install lock of the bundled server: one window installs, the others wait for it. */

import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const LOCK_STALE_MS = 20 * 60_000;

/** Take the install lock (true), or see another window finish the install while waiting
 * (false). The lock is a folder holding its owner's pid: a lock whose owner is gone (a crashed
 * window) or older than the longest install is stale and taken over. */
export async function acquire(
  lock: string,
  installed: () => boolean,
  waiting: () => void,
  pollMs = 2000,
): Promise<boolean> {
  for (let announced = false; ; ) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "pid"), String(process.pid));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (installed()) return false;
    let age = 0;
    let owner = Number.NaN;
    try {
      age = Date.now() - statSync(lock).mtimeMs;
      owner = Number(readFileSync(join(lock, "pid"), "utf8"));
    } catch {
      // released meanwhile, or its owner has not written its pid yet
    }
    if (age > LOCK_STALE_MS || (Number.isInteger(owner) && owner > 0 && !alive(owner))) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!announced) {
      waiting();
      announced = true;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
