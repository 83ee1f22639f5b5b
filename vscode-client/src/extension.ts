/** Entry point: one output channel, the daemon, the status bar, the `@nous` participant, the
 * language-model tools and the commands; restarts the daemon when a `nous.*` setting changes. */

import * as vscode from "vscode";
import { MemoryBrowser } from "./browser";
import { registerCommands } from "./commands";
import { Daemon } from "./daemon";
import { ChatSessions, registerForgetSession } from "./forgetSession";
import type { Interpreter } from "./interpreter";
import type { Tally } from "./ledger";
import { registerParticipant } from "./participant";
import type { BudgetNotification, StatsResult, StatusResult } from "./protocol";
import { affectsDaemon } from "./settings";
import { State } from "./state";
import { StatusBar } from "./statusBar";
import { registerTools } from "./tools";

/** What other extensions (and the end-to-end test) can read. */
export interface NousApi {
  lastBudget(): BudgetNotification | undefined;
  /** The chat session the status bar shows and what it was given (the sum of its manifests). */
  injected(): Tally | undefined;
  /** The status bar's text as set (e.g. `Nous 420/3k`). */
  statusText(): string;
  /** The last manifests, oldest first: what each answer injected, in which session (and that
   * session's cap: an agent's session has the agent's). */
  manifests(): {
    title: string;
    sessionId: string | null;
    sessionCap: number;
    mode: string;
    tokens: number;
    preview: boolean;
    /** The injected items, and the verdict of the model's reply on each one judged. */
    items: { id: string; kind: string; text: string }[];
    judged: Record<string, boolean>;
  }[];
  /** The last `nous/stats` of the chat session the status bar shows. */
  sessionStats(): StatsResult | undefined;
  request<R>(method: string, params?: object): Promise<R>;
  isRunning(): boolean;
  /** The Python the daemon runs on and where it came from (`bundled`: the VSIX's own server). */
  interpreter(): Interpreter | undefined;
  memoryBrowser(): ReturnType<MemoryBrowser["snapshot"]>;
}

export async function activate(context: vscode.ExtensionContext): Promise<NousApi> {
  const output = vscode.window.createOutputChannel("Nous");
  const daemon = new Daemon(output, context.extensionPath, context.globalStorageUri.fsPath);
  const state = new State();
  const chatSessions = new ChatSessions(context.workspaceState);
  const statusBar = new StatusBar(
    state,
    () => vscode.workspace.getConfiguration("nous").get<number>("sessionCap", 3000),
    (id) => chatSessions.list().find((s) => s.id === id)?.title,
  );
  const browser = new MemoryBrowser(daemon);
  context.subscriptions.push(output, daemon, state, statusBar, browser);

  const refreshWorkspace = async (): Promise<void> => {
    try {
      const status = await daemon.status();
      const capture = typeof status.capture === "boolean" ? status.capture : undefined;
      state.setWorkspace({ project: status.project, language: languageOf(status), capture });
    } catch (err) {
      daemon.log(`status failed: ${String(err)}`);
    }
  };
  context.subscriptions.push(
    state.onDidChange(() => statusBar.render()),
    daemon.onStarting(() => statusBar.setDaemon("starting")),
    daemon.onRunning((running) => {
      statusBar.setDaemon(running ? "running" : "stopped");
      if (running) void refreshWorkspace();
      if (running) void browser.refresh();
    }),
    daemon.onBudget((budget) => state.setBudget(budget)),
    daemon.onIndexed(() => void refreshWorkspace()),
    daemon.onIndexed(() => void browser.refresh()),
    daemon.onBudget(() => void browser.refresh()),
    vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (editor && editor.document.uri.scheme === "file") state.setWorkspace({ language: editor.document.languageId });
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (affectsDaemon((section) => event.affectsConfiguration(section))) {
        daemon.log("a nous.* setting changed: restarting the daemon");
        void daemon.restart();
      }
    }),
    registerParticipant(daemon, state, chatSessions),
    registerForgetSession(daemon, chatSessions),
    ...registerTools(daemon, state, chatSessions),
    ...registerCommands(daemon, state),
  );

  void daemon.start();
  return {
    lastBudget: () => state.lastBudget,
    injected: () => state.ledger.tally(),
    statusText: () => statusBar.text,
    manifests: () =>
      state.manifests.map((m) => ({
        title: m.title,
        sessionId: m.result.session.id,
        sessionCap: m.result.session.cap,
        mode: m.result.mode,
        tokens: m.result.tokens,
        preview: m.preview,
        items: m.result.sections.flatMap((s) => s.items.map((i) => ({ id: i.id, kind: i.kind, text: i.text }))),
        judged: Object.fromEntries(m.judged),
      })),
    sessionStats: () => state.statsOf(state.ledger.current),
    request: (method, params) => daemon.request(method, params),
    isRunning: () => daemon.isRunning,
    interpreter: () => daemon.interpreter,
    memoryBrowser: () => browser.snapshot(),
  };
}

function languageOf(status: StatusResult): string | undefined {
  const first = status.languages[0];
  return typeof first === "string" ? first : undefined;
}

export function deactivate(): void {
  // the Daemon is disposed with the subscriptions, which stops the client
}
