/** The `Nous 1.2k/3k` status-bar item: text and tooltip from `budget.ts`, colour by level,
 * click shows the last manifest. */

import * as vscode from "vscode";
import { level, statusText, tooltipMarkdown } from "./budget";
import type { State } from "./state";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private daemon: "starting" | "running" | "stopped" = "starting";

  constructor(
    private readonly state: State,
    private readonly sessionCap: () => number,
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
    const budget = this.state.lastBudget;
    if (this.daemon !== "running") {
      this.item.text = this.daemon === "starting" ? "$(sync~spin) Nous" : "$(circle-slash) Nous";
      this.item.tooltip =
        this.daemon === "starting"
          ? "Nous: starting the daemon…"
          : "Nous: the daemon is not running (see the Nous output). Run “Nous: Restart Server” to start it; click for the last manifest.";
      this.item.backgroundColor = undefined;
      return;
    }
    const shown = budget ?? { used: 0, cap: this.sessionCap() };
    this.item.text = statusText(shown);
    const tooltip = new vscode.MarkdownString(tooltipMarkdown(budget, this.state.workspace), true);
    this.item.tooltip = tooltip;
    const look = level(shown.used, shown.cap);
    this.item.backgroundColor =
      look === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : look === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
