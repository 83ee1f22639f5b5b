/** The `Nous 1.2k/3k` status-bar item: the tokens injected into the current chat session (the
 * ledger's tally: the sum of its manifests) over the session cap; tooltip from `budget.ts` (with
 * the session's `nous/stats`: referenced share, utilization, refreshes per turn), colour by the
 * session cap's own count, click shows the last manifest. */

import * as vscode from "vscode";
import { level, statusText, tooltipMarkdown } from "./budget";
import type { State } from "./state";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private daemon: "starting" | "running" | "stopped" = "starting";

  constructor(
    private readonly state: State,
    private readonly sessionCap: () => number,
    private readonly sessionTitle: (id: string) => string | undefined = () => undefined,
  ) {
    this.item = vscode.window.createStatusBarItem("nous.budget", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Nous budget";
    this.item.command = "nous.showManifest";
    this.render();
    this.item.show();
  }

  setDaemon(state: "starting" | "running" | "stopped"): void {
    this.daemon = state;
    this.render();
  }

  render(): void {
    const tally = this.state.ledger.tally();
    const team = this.state.lastBudget?.team;
    const cap = tally?.cap ?? this.sessionCap();
    if (this.daemon !== "running") {
      this.item.text = this.daemon === "starting" ? "$(sync~spin) Nous" : "$(circle-slash) Nous";
      this.item.tooltip =
        this.daemon === "starting"
          ? "Nous: starting the daemon…"
          : "Nous: the daemon is not running (see the Nous output). Run “Nous: Restart Server” to start it; click for the last manifest.";
      this.item.backgroundColor = undefined;
      return;
    }
    this.item.text = statusText({ used: tally?.injected ?? 0, cap, team });
    const title = tally ? this.sessionTitle(tally.sessionId) : undefined;
    const stats = this.state.statsOf(tally?.sessionId);
    const tooltip = new vscode.MarkdownString(tooltipMarkdown(tally, this.state.workspace, team, title, stats), true);
    this.item.tooltip = tooltip;
    const look = level(tally?.capUsed ?? 0, cap);
    this.item.backgroundColor =
      look === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : look === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  }

  get text(): string {
    return this.item.text;
  }

  dispose(): void {
    this.item.dispose();
  }
}
