/** First start of a VSIX that brings its server: install the bundled wheels into a private venv
 * under the extension's global storage (offline, with a progress notification), once per bundle. */

import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { devNull } from "node:os";
import { join } from "node:path";
import * as vscode from "vscode";
import {
  baseCandidates,
  envDir,
  installArgs,
  judgeBase,
  missingPythonMessage,
  offlinePipEnv,
  parseBundle,
  stamp,
  venvPython,
  VERSION_PROBE,
  type Bundle,
} from "./bundle";
import { acquire } from "./lock";

export class BootstrapError extends Error {}

/** The bundle shipped in this extension, if it is a platform VSIX built by scripts/package. */
export function findBundle(extensionPath: string): Bundle | undefined {
  const dir = join(extensionPath, "bundled", "wheels");
  const file = join(dir, "bundle.json");
  if (!existsSync(file)) return undefined;
  return parseBundle(dir, readFileSync(file, "utf8"));
}

interface Run {
  code: number | string | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeout: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? ((error as NodeJS.ErrnoException).code ?? 1) : 0;
      resolve({ code: code as number | string | null, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** The private environment's interpreter, installing it first when needed. */
export async function ensureServer(
  bundle: Bundle,
  storage: string,
  fromPythonExtension: string | undefined,
  log: (message: string) => void,
): Promise<string> {
  const env = envDir(storage, bundle);
  const python = venvPython(env, process.platform);
  const wheels = readdirSync(bundle.dir).filter((f) => f.endsWith(".whl"));
  const expected = stamp(bundle, wheels);
  const stampFile = join(env, ".nous-bundle");
  const installed = (): boolean =>
    existsSync(python) && existsSync(stampFile) && readFileSync(stampFile, "utf8") === expected;
  if (installed()) {
    log(`bundled server: ${python}`);
    return python;
  }
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Nous: installing its server", cancellable: false },
    async (progress) => {
      const say = (message: string): void => progress.report({ message });
      // one installer at a time: another window may be installing the same bundle
      mkdirSync(storage, { recursive: true });
      const lock = `${env}.lock`;
      if (!(await acquire(lock, installed, () => say("waiting for another window's install…")))) {
        log(`bundled server: installed by another window: ${python}`);
        return python;
      }
      try {
        await install(bundle, env, python, wheels.length, fromPythonExtension, say, log);
        writeFileSync(stampFile, expected);
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
      log(`bundled server installed: ${python}`);
      return python;
    },
  );
}

async function install(
  bundle: Bundle,
  env: string,
  python: string,
  count: number,
  fromPythonExtension: string | undefined,
  say: (message: string) => void,
  log: (message: string) => void,
): Promise<void> {
  say("looking for Python…");
  const base = await findBase(bundle, fromPythonExtension, log);
  say(`creating a private environment with ${base}…`);
  log(`bundled server: creating ${env} with ${base}`);
  rmSync(env, { recursive: true, force: true });
  const venv = await run(base, ["-m", "venv", env], process.env, 300_000);
  if (venv.code !== 0 || !existsSync(python)) {
    log(venv.stdout + venv.stderr);
    rmSync(env, { recursive: true, force: true });
    throw new BootstrapError(
      `Nous could not create a Python environment with ${base} (venv or ensurepip is missing; Debian/Ubuntu: sudo apt install python3-venv). See the Nous output.`,
    );
  }
  say(`installing ${count} bundled packages (offline, about a minute)…`);
  log(`bundled server: ${python} ${installArgs(bundle).join(" ")}`);
  const pip = await run(python, installArgs(bundle), offlinePipEnv(process.env, devNull), 900_000);
  log(pip.stdout + pip.stderr);
  if (pip.code !== 0) {
    rmSync(env, { recursive: true, force: true });
    const missing = /No matching distribution found for (\S+)/.exec(pip.stderr)?.[1];
    throw new BootstrapError(
      missing
        ? `Nous could not install its bundled server: no wheel of ${missing} for this machine in the VSIX (${bundle.target}, CPython ${bundle.pythons.join("/")}). See the Nous output.`
        : `Nous could not install its bundled server (pip failed). See the Nous output.`,
    );
  }
}

async function findBase(bundle: Bundle, fromPythonExtension: string | undefined, log: (message: string) => void): Promise<string> {
  const tried: { python: string; found: string }[] = [];
  for (const candidate of baseCandidates(fromPythonExtension, bundle, process.platform)) {
    const probe = await run(candidate, ["-c", VERSION_PROBE], process.env, 30_000);
    const version = probe.stdout.trim();
    const found =
      probe.code === "ENOENT" ? "not found" : probe.code !== 0 ? "no venv module" : judgeBase(version, bundle) === "fits" ? version : `Python ${version}`;
    log(`bundled server: base candidate ${candidate}: ${found}`);
    if (probe.code === 0 && judgeBase(version, bundle) === "fits") return candidate;
    tried.push({ python: candidate, found });
  }
  throw new BootstrapError(missingPythonMessage(bundle, tried));
}
