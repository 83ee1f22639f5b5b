/** Which Python runs the daemon, and the exact commands a user needs when it cannot. Pure. */

export type InterpreterSource = "setting" | "python-extension" | "path" | "bundled";

export interface Interpreter {
  path: string;
  source: InterpreterSource;
}

/** `nous.python` first, then the Python extension's active interpreter, then `python3` on PATH. */
export function pickInterpreter(setting: unknown, fromPythonExtension: string | undefined): Interpreter {
  if (typeof setting === "string" && setting.trim() !== "") return { path: setting.trim(), source: "setting" };
  if (fromPythonExtension && fromPythonExtension.trim() !== "") {
    return { path: fromPythonExtension.trim(), source: "python-extension" };
  }
  return { path: "python3", source: "path" };
}

/** Quote for a POSIX shell or PowerShell when the path has spaces or quotes. */
export function shellQuote(path: string): string {
  return /^[\w@%+=:,./\\-]+$/.test(path) ? path : `"${path.replace(/(["\\$`])/g, "\\$1")}"`;
}

/** The daemon's Python distribution (pyproject.toml); `nous` on the package index is another
 * project, so nothing here ever tells anyone to install that. */
export const PACKAGE = "nous-context";

/** How to install the daemon for `python`: from the wheels bundled in this VSIX (offline), or, in
 * a build without them, from the wheel `scripts/package` builds. */
export function installCommand(python: string, wheels: string | undefined): string {
  if (wheels) return `${shellQuote(python)} -m pip install --no-index --find-links ${shellQuote(wheels)} ${PACKAGE}`;
  return `${shellQuote(python)} -m pip install dist/nous_context-*.whl`;
}

/** Arguments that start the daemon; vscode-languageclient appends `--stdio`. */
export function serveArgs(): string[] {
  return ["-m", "nous", "serve"];
}

/** A one-line Python check run before starting: exit 0 when the daemon's package imports,
 * 3 when it is missing. */
export const PROBE =
  "import importlib.util, sys\n" +
  "try:\n    ok = importlib.util.find_spec('nous.lsp.server') is not None\n" +
  "except Exception:\n    ok = False\n" +
  "sys.exit(0 if ok else 3)";

export type ProbeOutcome = "ok" | "no-python" | "no-package" | "error";

export function probeOutcome(code: number | null, errno: string | undefined): ProbeOutcome {
  if (errno === "ENOENT" || errno === "EACCES") return "no-python";
  if (code === 0) return "ok";
  if (code === 3) return "no-package";
  return "error";
}
