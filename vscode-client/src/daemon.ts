/** Starting, stopping and talking to the daemon (`python -m nous serve --stdio`) through
 * vscode-languageclient; the interpreter check and its notifications; one output channel. */

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  LanguageClient,
  State as ClientState,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import {
  installCommand,
  pickInterpreter,
  PROBE,
  probeOutcome,
  serveArgs,
  type Interpreter,
  type ProbeOutcome,
} from "./interpreter";
import { BootstrapError, ensureServer, findBundle } from "./bootstrap";
import type { Bundle } from "./bundle";
import { NOUS_BUDGET, NOUS_INDEXED, NOUS_STATUS, type BudgetNotification, type StatusResult } from "./protocol";
import { initializationOptions, trustedReader } from "./settings";

export class DaemonNotRunning extends Error {
  constructor() {
    super("The Nous daemon is not running. Run “Nous: Restart Server”, or see the Nous output.");
  }
}

export class Daemon implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private readonly budget = new vscode.EventEmitter<BudgetNotification>();
  private readonly indexed = new vscode.EventEmitter<unknown>();
  private readonly running = new vscode.EventEmitter<boolean>();
  private readonly startingEvent = new vscode.EventEmitter<void>();
  readonly onStarting = this.startingEvent.event;
  readonly onBudget = this.budget.event;
  readonly onIndexed = this.indexed.event;
  readonly onRunning = this.running.event;
  interpreter: Interpreter | undefined;
  /** The server wheels this VSIX brings (a platform VSIX from scripts/package), if any. */
  readonly bundle: Bundle | undefined;

  /** `storage` is the extension's global storage folder: the bundled server's venv lives there. */
  constructor(
    readonly output: vscode.OutputChannel,
    extensionPath: string,
    private readonly storage: string,
  ) {
    this.bundle = findBundle(extensionPath);
  }

  log(message: string): void {
    this.output.appendLine(`[${new Date().toISOString()}] ${message}`);
  }

  get isRunning(): boolean {
    return this.client?.state === ClientState.Running;
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.log("stopping the daemon");
      try {
        await client.stop(5000);
      } catch (err) {
        this.log(`stop: ${String(err)}`);
      }
      this.running.fire(false);
    }
  }

  async request<R>(method: string, params?: object): Promise<R> {
    if (this.starting) await this.starting;
    const client = this.client;
    if (!client || client.state !== ClientState.Running) throw new DaemonNotRunning();
    return client.sendRequest<R>(method, params);
  }

  async status(): Promise<StatusResult> {
    return this.request<StatusResult>(NOUS_STATUS, {});
  }

  private async doStart(): Promise<void> {
    this.startingEvent.fire();
    // `nous.python` and `nous.db` come from user/machine settings only: a cloned workspace
    // must not choose what this extension executes or where memories are written.
    const read = trustedReader(vscode.workspace.getConfiguration("nous"));
    const setting = read("python");
    const fromPythonExtension = await pythonExtensionInterpreter(this);
    let interpreter = pickInterpreter(setting, fromPythonExtension);
    if (interpreter.source !== "setting" && this.bundle) {
      // the VSIX brings its server: install it into a private venv on first start
      try {
        const path = await ensureServer(this.bundle, this.storage, fromPythonExtension, (m) => this.log(m));
        interpreter = { path, source: "bundled" };
      } catch (err) {
        this.log(`bundled server: ${String(err)}`);
        this.running.fire(false);
        const message = err instanceof BootstrapError ? err.message : `Nous could not install its bundled server: ${String(err)}`;
        void vscode.window.showErrorMessage(message, "Show Output", "Choose Python").then(async (pick) => {
          if (pick === "Show Output") this.output.show();
          if (pick === "Choose Python") await vscode.commands.executeCommand("workbench.action.openSettings", "nous.python");
        });
        return;
      }
    }
    this.interpreter = interpreter;
    this.log(`interpreter: ${interpreter.path} (from ${interpreter.source})`);
    const outcome = await probe(interpreter.path);
    if (outcome !== "ok") {
      this.log(`interpreter check: ${outcome}`);
      void explain(outcome, interpreter, this, this.bundle);
      this.running.fire(false);
      return;
    }
    const options = initializationOptions(read);
    this.log(`initializationOptions: ${JSON.stringify(options)}`);
    const serverOptions: ServerOptions = {
      command: interpreter.path,
      args: serveArgs(),
      transport: TransportKind.stdio,
      options: { env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      initializationOptions: options,
    };
    const client = new LanguageClient("nous", "Nous", serverOptions, clientOptions);
    client.onNotification(NOUS_BUDGET, (params: BudgetNotification) => {
      this.log(`budget: session ${params.sessionId ?? "—"} ${params.used}/${params.cap}`);
      this.budget.fire(params);
    });
    client.onNotification(NOUS_INDEXED, (params: unknown) => {
      this.log(`indexed: ${JSON.stringify(params)}`);
      this.indexed.fire(params);
    });
    client.onDidChangeState((e) => this.running.fire(e.newState === ClientState.Running));
    this.client = client;
    this.log(`starting: ${interpreter.path} ${serveArgs().join(" ")} --stdio`);
    try {
      await client.start();
      this.log("daemon running");
    } catch (err) {
      this.log(`the daemon failed to start: ${String(err)}`);
      const pick = await vscode.window.showErrorMessage(
        `Nous: the daemon failed to start with ${interpreter.path}. See the Nous output for its log.`,
        "Show Output",
        "Restart Server",
      );
      if (pick === "Show Output") this.output.show();
      if (pick === "Restart Server") void vscode.commands.executeCommand("nous.restartServer");
    }
  }

  dispose(): void {
    void this.stop();
    this.budget.dispose();
    this.indexed.dispose();
    this.running.dispose();
    this.startingEvent.dispose();
  }
}

function probe(python: string): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    execFile(python, ["-c", PROBE], { timeout: 30_000 }, (error) => {
      if (!error) return resolve("ok");
      const errno = (error as NodeJS.ErrnoException).code;
      const code = typeof errno === "number" ? errno : typeof error.code === "number" ? error.code : null;
      resolve(probeOutcome(code, typeof errno === "string" ? errno : undefined));
    });
  });
}

async function explain(outcome: ProbeOutcome, interpreter: Interpreter, daemon: Daemon, bundle: Bundle | undefined): Promise<void> {
  const command = installCommand(interpreter.path, bundle?.dir);
  if (outcome === "no-package") {
    // at most three short buttons: a toast cuts longer rows ("Use Bundled …", "Run in Ter…");
    // the two ways to install are one "Install…" choice
    const actions = ["Install…", "Choose Python"];
    if (bundle && interpreter.source === "setting") actions.unshift("Use Bundled");
    const pick = await vscode.window.showErrorMessage(
      `Nous: the daemon is not installed for ${interpreter.path}. Install it with: ${command}`,
      ...actions,
    );
    if (pick === "Use Bundled") {
      // clearing nous.python restarts the daemon on the bundled server (a nous.* change)
      await vscode.workspace.getConfiguration("nous").update("python", undefined, vscode.ConfigurationTarget.Global);
    } else if (pick === "Install…") {
      const how = await vscode.window.showQuickPick(
        [
          { label: "$(terminal) Run in a terminal", detail: command, run: true },
          { label: "$(copy) Copy the command", detail: command, run: false },
        ],
        { title: `Install Nous for ${interpreter.path}`, placeHolder: "The install command (offline when it names the bundled wheels)" },
      );
      if (how?.run) {
        const terminal = vscode.window.createTerminal("Nous install");
        terminal.show();
        terminal.sendText(command);
      } else if (how) {
        await vscode.env.clipboard.writeText(command);
      }
    } else if (pick === "Choose Python") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "nous.python");
    }
    return;
  }
  const what =
    outcome === "no-python"
      ? `Nous: Python was not found at “${interpreter.path}”. Set “nous.python” to a Python 3.11+ interpreter with Nous installed (${command}).`
      : `Nous: ${interpreter.path} failed while checking for the Nous package; see the Nous output. To install it: ${command}`;
  const pick = await vscode.window.showErrorMessage(what, "Choose Python", "Show Output");
  if (pick === "Choose Python") await vscode.commands.executeCommand("workbench.action.openSettings", "nous.python");
  if (pick === "Show Output") daemon.output.show();
}

interface PythonEnvironmentApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] };
  };
}

/** The Python extension's active interpreter for the first workspace folder, when installed. */
async function pythonExtensionInterpreter(daemon: Daemon): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonEnvironmentApi>("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api.environments?.getActiveEnvironmentPath(resource);
    if (active && api.environments) {
      const env = await api.environments.resolveEnvironment(active);
      const path = env?.executable?.uri?.fsPath;
      if (path) return path;
    }
    return api.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
  } catch (err) {
    daemon.log(`the Python extension gave no interpreter: ${String(err)}`);
    return undefined;
  }
}
