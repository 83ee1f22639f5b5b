/** The `Nous 1.2k/3k` status-bar item: text and tooltip from `budget.ts`, colour by level,
 * click shows the last manifest. */

import * as vscode from "vscode";
import { level, statusText, tooltipMarkdown } from "./budget";
import type { State } from "./state";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private running = false;

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

  setRunning(running: boolean): void {
    this.running = running;
    this.render();
  }

  render(): void {
    const budget = this.state.lastBudget;
    if (!this.running && !budget) {
      this.item.text = "$(circle-slash) Nous";
      this.item.tooltip = "Nous: the daemon is not running. Click for the last manifest; run “Nous: Restart Server” to start it.";
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
