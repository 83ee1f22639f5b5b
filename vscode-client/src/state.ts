/** What this window knows between requests: the last manifest, what each chat session was given
 * (the ledger the status bar shows), the last budget notification (team state), the workspace
 * facts for the tooltip, and the chat session a tool call belongs to. */

import * as vscode from "vscode";
import type { BudgetNotification, ContextResult, FeedbackResult, StatsResult } from "./protocol";
import type { Workspace } from "./budget";
import { Ledger, type Tally } from "./ledger";
import { tokenSession } from "./toolTurns";

export interface Manifest {
  title: string;
  result: ContextResult;
  at: Date;
  /** Shown, not injected (Show Context for…, `@nous /context`). */
  preview: boolean;
  /** The session's tally right after this answer (none for a preview). */
  tally: Tally | undefined;
  /** Memory id → whether the model's reply referenced it (`nous/feedback`), for the items of
   * this answer that were judged; empty until a reply is. */
  judged: Map<string, boolean>;
}

const MAX_STATS = 50;

export class State {
  lastManifest: Manifest | undefined;
  /** The last few manifests, oldest first (what the end-to-end test adds up). */
  readonly manifests: Manifest[] = [];
  lastBudget: BudgetNotification | undefined;
  /** Every injection this window made, per chat session. */
  readonly ledger = new Ledger();
  workspace: Workspace = {};
  /** The last `nous/stats` of each chat session (referenced share, utilization, refreshes). */
  private readonly stats = new Map<string, StatsResult>();
  /** Session of the `@nous` request in flight, so tools it calls share its session cap. */
  private activeSession: string | undefined;
  /** Session for tool calls from other participants and agents in this window. */
  readonly windowSession = newSessionId("tools");

  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  /** An answer the daemon gave: counted in its session's tally unless it is a preview, and kept
   * as the last manifest. Every path that injects (the participant, the tools, the commands)
   * comes through here. Returns the session's tally (none for a preview). */
  injected(title: string, result: ContextResult, options: { preview?: boolean } = {}): Tally | undefined {
    const preview = options.preview === true;
    const tally = preview ? undefined : this.ledger.add(result);
    this.lastManifest = { title, result, at: new Date(), preview, tally, judged: new Map() };
    this.manifests.push(this.lastManifest);
    if (this.manifests.length > 50) this.manifests.shift();
    if (typeof result.intent.task === "string") this.workspace = { ...this.workspace, task: result.intent.task };
    this.changed.fire();
    return tally;
  }

  /** A reply was judged: each judged item is marked on the last answer of its session that
   * injected it (as the daemon credits it). */
  judged(feedback: FeedbackResult): void {
    const verdicts: [string, boolean][] = [
      ...feedback.referenced.map((id): [string, boolean] => [id, true]),
      ...feedback.notReferenced.map((id): [string, boolean] => [id, false]),
    ];
    const answers = this.manifests.filter((m) => !m.preview && m.result.session.id === feedback.sessionId).reverse();
    for (const [id, referenced] of verdicts) {
      const answer = answers.find((m) => m.result.sections.some((s) => s.items.some((i) => i.id === id)));
      answer?.judged.set(id, referenced);
    }
    this.changed.fire();
  }

  setStats(stats: StatsResult): void {
    if (!stats.sessionId) return;
    this.stats.delete(stats.sessionId);
    this.stats.set(stats.sessionId, stats);
    while (this.stats.size > MAX_STATS) this.stats.delete(this.stats.keys().next().value as string);
    this.changed.fire();
  }

  statsOf(sessionId: string | undefined): StatsResult | undefined {
    return sessionId === undefined ? undefined : this.stats.get(sessionId);
  }

  setBudget(budget: BudgetNotification): void {
    this.lastBudget = budget;
    if (budget.project) this.workspace = { ...this.workspace, project: budget.project };
    this.changed.fire();
  }

  setWorkspace(update: Workspace): void {
    this.workspace = { ...this.workspace, ...update };
    this.changed.fire();
  }

  async withSession<T>(sessionId: string, run: () => Promise<T>): Promise<T> {
    const previous = this.activeSession;
    this.activeSession = sessionId;
    try {
      return await run();
    } finally {
      this.activeSession = previous;
    }
  }

  /** The session a tool call counts against: the `@nous` request in flight, else the chat the
   * invocation token names (agent mode), else this window's. */
  toolSession(token?: unknown): string {
    return this.activeSession ?? tokenSession(token) ?? this.windowSession;
  }

  /** Whether an `@nous` request is in flight (it reports its prompt and reply as turns itself). */
  inParticipant(): boolean {
    return this.activeSession !== undefined;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function newSessionId(prefix: string): string {
  const random = Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
  return `vscode-${prefix}-${random}`;
}
