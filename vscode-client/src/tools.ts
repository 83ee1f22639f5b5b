/** Language-model tools for agent-mode models: `nous_context` (#nousContext), `nous_recall`
 * (#nousRecall) and `nous_remember` (#nousRemember, confirmed by the user first). Outside an
 * `@nous` request, a tool call is an agent's: it counts against the chat session its invocation
 * token names, under the agent's limits (`agent: true`), and its input (the task, the query) is
 * reported as that chat's turn, naming the tool (`toolTurns.ts`). */

import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import type { ChatSessions } from "./forgetSession";
import {
  NOUS_CONTEXT,
  NOUS_RECALL,
  NOUS_REMEMBER,
  NOUS_TURN,
  type ContextParams,
  type ContextResult,
  type RecallParams,
  type RememberResult,
  type TurnResult,
} from "./protocol";
import type { Tally } from "./ledger";
import { refusal, summaryLine } from "./manifest";
import { recallBudget } from "./settings";
import type { State } from "./state";
import { toolTurn } from "./toolTurns";

export const TOOL_CONTEXT = "nous_context";
export const TOOL_RECALL = "nous_recall";
export const TOOL_REMEMBER = "nous_remember";

interface ContextInput {
  task?: string;
}
interface RecallInput {
  query: string;
  kinds?: string[];
}
interface RememberInput {
  kind: string;
  content: string;
  scope?: string;
  tags?: string[];
}

function text(value: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)]);
}

/** The tool's answer: the context, then one line of what it cost. A limit that refused the
 * request is an error the caller sees (never an empty answer that reads as "memory has nothing"). */
function withSummary(result: ContextResult, tally: Tally | undefined): string {
  if (result.limit) throw new Error(refusal(result.limit));
  const body = result.text.trim() || "No memories matched.";
  return `${body}\n\n(${summaryLine(result, tally)})`;
}

export function registerTools(daemon: Daemon, state: State, sessions?: ChatSessions): vscode.Disposable[] {
  /** The chat turn a tool call saw, kept by the daemon (capture setting and rules apply there). An
   * `@nous` request reports its own prompt and reply, so its tool calls add nothing. Never fails
   * the tool: a lost turn is logged. */
  function report(tool: string, input: unknown, sessionId: string): void {
    if (state.inParticipant()) return;
    const turn = toolTurn(tool, input, sessionId);
    if (!turn) return;
    sessions?.saw(sessionId, `#${tool === TOOL_CONTEXT ? "nousContext" : "nousRecall"} ${turn.text}`);
    daemon.request<TurnResult>(NOUS_TURN, turn).then(
      (kept) => daemon.log(`${tool}: turn of ${sessionId} ${kept.stored ? "kept" : "not kept"}`),
      (err: unknown) => daemon.log(`${tool}: turn capture failed: ${String(err)}`),
    );
  }

  /** An agent-mode model's call (not the `@nous` participant's tool loop, whose session is a chat's):
   * the daemon gives its session the agent's recall limit and session cap. */
  function agentFlag(): { agent?: true } {
    return state.inParticipant() ? {} : { agent: true };
  }

  const context: vscode.LanguageModelTool<ContextInput> = {
    prepareInvocation: () => ({ invocationMessage: "Reading this project's memory (Nous)" }),
    async invoke(options) {
      const task = options.input.task?.trim() ?? "";
      const sessionId = state.toolSession(options.toolInvocationToken);
      const result = await daemon.request<ContextResult>(NOUS_CONTEXT, {
        input: task,
        mode: "startup",
        sessionId,
        activeFile: vscode.window.activeTextEditor?.document.uri.toString(),
        ...agentFlag(),
      } satisfies ContextParams);
      const tally = state.injected(`#nousContext ${task}`.trim(), result);
      report(TOOL_CONTEXT, options.input, sessionId);
      return text(withSummary(result, tally));
    },
  };

  const recall: vscode.LanguageModelTool<RecallInput> = {
    prepareInvocation: (options) => ({
      invocationMessage: `Recalling “${options.input.query}” from Nous`,
    }),
    async invoke(options) {
      const query = options.input.query?.trim();
      if (!query) throw new Error("nous_recall needs a non-empty `query`.");
      const configured = vscode.workspace.getConfiguration("nous").get<number>("recallBudget", 500);
      const budget = recallBudget(configured, options.tokenizationOptions?.tokenBudget);
      const sessionId = state.toolSession(options.toolInvocationToken);
      const result = await daemon.request<ContextResult>(NOUS_RECALL, {
        query,
        kinds: options.input.kinds?.length ? options.input.kinds : undefined,
        sessionId,
        budget,
        ...agentFlag(),
      } satisfies RecallParams);
      const tally = state.injected(`#nousRecall ${query}`, result);
      report(TOOL_RECALL, options.input, sessionId);
      return text(withSummary(result, tally));
    },
  };

  const remember: vscode.LanguageModelTool<RememberInput> = {
    prepareInvocation: (options) => {
      const { kind, content, scope } = options.input;
      const message = new vscode.MarkdownString();
      message.appendMarkdown(`Store this **${kind}** in ${scope ?? "project"} memory?\n\n`);
      message.appendText(content);
      return {
        invocationMessage: `Remembering a ${kind} in Nous`,
        confirmationMessages: { title: "Remember in Nous?", message },
      };
    },
    async invoke(options) {
      const { kind, content, scope, tags } = options.input;
      if (!kind || !content?.trim()) throw new Error("nous_remember needs `kind` and `content`.");
      const result = await daemon.request<RememberResult>(NOUS_REMEMBER, {
        kind,
        content,
        scope,
        tags: tags ?? [],
        source: "chat-tool",
      });
      const redacted = result.redactions.length ? ` Redacted: ${result.redactions.join(", ")}.` : "";
      return text(`Remembered ${kind} ${result.id} (${result.status}, ${result.memoryStatus}).${redacted}`);
    },
  };

  return [
    vscode.lm.registerTool(TOOL_CONTEXT, context),
    vscode.lm.registerTool(TOOL_RECALL, recall),
    vscode.lm.registerTool(TOOL_REMEMBER, remember),
  ];
}
