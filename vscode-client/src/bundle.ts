/** The server bundled in a platform VSIX (`bundled/wheels`, written by scripts/package): which
 * wheels it holds, where its private environment lives, which Python can host it. Pure. */

import { join } from "node:path";

export interface Bundle {
  /** Folder of wheels: nous-context and every dependency, for one target. */
  dir: string;
  package: string;
  version: string;
  /** VS Code target, e.g. `linux-x64`. */
  target: string;
  /** CPython versions the binary wheels are for, e.g. `["3.11"]`. */
  pythons: string[];
}

/** The bundle described by `bundle.json` in `dir`, or undefined when the JSON is not one. */
export function parseBundle(dir: string, json: string): Bundle | undefined {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null) return undefined;
  const { package: pkg, version, target, pythons } = data as Record<string, unknown>;
  if (typeof pkg !== "string" || typeof version !== "string" || typeof target !== "string" || typeof pythons !== "string") {
    return undefined;
  }
  const list = pythons.split(/\s+/).filter((v) => /^3\.\d+$/.test(v));
  if (list.length === 0) return undefined;
  return { dir, package: pkg, version, target, pythons: list };
}

/** The private environment of this bundle under the extension's global storage. */
export function envDir(storage: string, bundle: Bundle): string {
  return join(storage, `server-${bundle.version}-${bundle.target}`);
}

/** The interpreter inside a venv. */
export function venvPython(env: string, platform: NodeJS.Platform): string {
  return platform === "win32" ? join(env, "Scripts", "python.exe") : join(env, "bin", "python");
}

/** What the stamp file of a finished install holds: a changed bundle is installed again. */
export function stamp(bundle: Bundle, wheels: string[]): string {
  return JSON.stringify({ package: bundle.package, version: bundle.version, target: bundle.target, wheels: [...wheels].sort() });
}

/** Pythons to try as the base of the private environment, best first, without repeats. */
export function baseCandidates(fromPythonExtension: string | undefined, bundle: Bundle, platform: NodeJS.Platform): string[] {
  const names =
    platform === "win32"
      ? ["python", "python3", "py"]
      : [...bundle.pythons.map((v) => `python${v}`), "python3", "python"];
  const all = [fromPythonExtension?.trim() || "", ...names].filter((p) => p !== "");
  return [...new Set(all)];
}

/** Prints `major.minor` and fails unless `venv` imports: run with `python -c`. */
export const VERSION_PROBE = "import sys, venv\nprint('%d.%d' % sys.version_info[:2])";

export type BaseVerdict = "fits" | "too-old" | "no-wheels";

/** Whether a Python of `version` can host the bundle: ≥ 3.11 and one the wheels are built for. */
export function judgeBase(version: string, bundle: Bundle): BaseVerdict {
  const match = /^(\d+)\.(\d+)$/.exec(version.trim());
  if (!match) return "too-old";
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major < 3 || (major === 3 && minor < 11)) return "too-old";
  return bundle.pythons.includes(`${major}.${minor}`) ? "fits" : "no-wheels";
}

/** pip arguments that install the bundle offline (no index, only the bundled wheels). */
export function installArgs(bundle: Bundle): string[] {
  return [
    "-m", "pip", "install", "--no-index", "--find-links", bundle.dir, "--disable-pip-version-check",
    "--no-input", "--no-warn-script-location", `${bundle.package}==${bundle.version}`,
  ];
}

/** The environment pip runs with: no configuration file, no index, whatever the machine says. */
export function offlinePipEnv(base: NodeJS.ProcessEnv, devnull: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, PIP_CONFIG_FILE: devnull, PIP_NO_INDEX: "1", PIP_DISABLE_PIP_VERSION_CHECK: "1" };
  for (const key of ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_REQUIRE_VIRTUALENV", "PYTHONPATH", "PYTHONHOME"]) {
    delete env[key];
  }
  return env;
}

/** The message for a machine without a Python that can host the bundle. */
export function missingPythonMessage(bundle: Bundle, tried: { python: string; found: string }[]): string {
  const wanted = bundle.pythons.join(" or ");
  const seen = tried.length ? ` Tried: ${tried.map((t) => `${t.python} (${t.found})`).join("; ")}.` : "";
  return (
    `Nous needs Python ${wanted} with the venv module to install its bundled server (${bundle.target}).${seen} ` +
    `Install Python ${wanted} (Debian/Ubuntu: sudo apt install python3 python3-venv), or set “nous.python” to an interpreter that has ${bundle.package}.`
  );
}
