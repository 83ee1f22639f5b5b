import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { acquire } from "../src/lock";

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "nous-lock-"));
}

test("a free lock is taken and names its owner", async () => {
  const lock = join(scratch(), "env.lock");
  assert.equal(await acquire(lock, () => false, () => assert.fail("nobody to wait for"), 10), true);
  assert.equal(readFileSync(join(lock, "pid"), "utf8"), String(process.pid));
});

test("a lock left by a window that died is taken over", async () => {
  const lock = join(scratch(), "env.lock");
  const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
  mkdirSync(lock);
  writeFileSync(join(lock, "pid"), String(gone));
  assert.equal(await acquire(lock, () => false, () => undefined, 10), true);
  assert.equal(readFileSync(join(lock, "pid"), "utf8"), String(process.pid));
});

test("while a live window installs, the others wait and then use its install", async () => {
  const dir = scratch();
  const lock = join(dir, "env.lock");
  mkdirSync(lock);
  writeFileSync(join(lock, "pid"), String(process.pid)); // a live owner
  let waited = 0;
  setTimeout(() => writeFileSync(join(dir, "done"), "1"), 150);
  const took = await acquire(lock, () => existsSync(join(dir, "done")), () => waited++, 20);
  assert.equal(took, false);
  assert.equal(waited, 1, "the wait is announced once");
});
