/** The `@nous` chat participant: turn-mode context from `nous/context` (with the chat history,
 * for dedup and refresh, and its size in the model's tokens, for the context overhead), the
 * prompt plus context sent to the chosen model with the Nous tools offered, the manifest as
 * references, `nous/feedback` after the reply (its verdicts marked on the manifests) and the
 * session's `nous/stats` for the status bar; and the commands /remember, /recall, /forget and
 * /context. */

import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import { linkIds } from "./browserModel";
import { droppedTitles } from "./commands";
import { items as manifestItems, parseRemember, refusal, renderManifest, sourceFiles, summaryLine, shortId } from "./manifest";
import {
  NOUS_CONTEXT,
  NOUS_FEEDBACK,
  NOUS_FORGET,
  NOUS_RECALL,
  NOUS_REMEMBER,
  NOUS_STATS,
  type ContextResult,
  type FeedbackResult,
  type ForgetResult,
  type Message,
  type RememberResult,
  type StatsResult,
} from "./protocol";
import type { ChatSessions } from "./forgetSession";
import { newSessionId, type State } from "./state";

export const PARTICIPANT_ID = "nous.chat";
const MAX_HISTORY = 20;
const MAX_TOOL_ROUNDS = 5;

interface NousChatResult extends vscode.ChatResult {
  metadata: { sessionId: string };
}

/** The Nous session of this chat: the one our earlier answers recorded, else a new one. */
function sessionOf(history: ReadonlyArray<vscode.ChatRequestTurn | vscode.ChatResponseTurn>): string {
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i];
    if (turn instanceof vscode.ChatResponseTurn) {
      const id = (turn.result.metadata as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof id === "string") return id;
    }
  }
  return newSessionId("chat");
}

function responseText(turn: vscode.ChatResponseTurn): string {
  return turn.response
    .map((part) => (part instanceof vscode.ChatResponseMarkdownPart ? part.value.value : ""))
    .join("");
}

/** Recent chat messages, oldest first, for dedup against what the conversation already holds. */
function conversationOf(history: ReadonlyArray<vscode.ChatRequestTurn | vscode.ChatResponseTurn>): Message[] {
  const messages: Message[] = [];
  for (const turn of history.slice(-MAX_HISTORY)) {
    if (turn instanceof vscode.ChatRequestTurn) messages.push({ role: "user", content: turn.prompt });
    else {
      const content = responseText(turn);
      if (content) messages.push({ role: "assistant", content });
    }
  }
  return messages;
}

/** The prompt without the `#tool` references VS Code leaves in it. */
function plainPrompt(request: vscode.ChatRequest): string {
  let prompt = request.prompt;
  const ranges = request.toolReferences
    .map((ref) => ref.range)
    .filter((r): r is [number, number] => Array.isArray(r))
    .sort((a, b) => b[0] - a[0]);
  for (const [start, end] of ranges) prompt = prompt.slice(0, start) + prompt.slice(end);
  return prompt.replace(/\s+/g, " ").trim();
}

function fileUri(path: string): vscode.Uri | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? vscode.Uri.joinPath(folder.uri, path) : undefined;
}

function showReferences(stream: vscode.ChatResponseStream, result: ContextResult): void {
  for (const path of sourceFiles(result)) {
    const uri = fileUri(path);
    if (uri) stream.reference(uri);
  }
}

const PREAMBLE =
  "The following is context from Nous, the user's local memory of this project: decisions, " +
  "conventions, constraints and procedures that apply. Follow it where it is relevant; say so when " +
  "you rely on it; do not mention memories that are irrelevant.\n\n";

export function registerParticipant(daemon: Daemon, state: State, sessions?: ChatSessions): vscode.Disposable {
  const handler: vscode.ChatRequestHandler = async (request, chat, stream, token) => {
    const sessionId = sessionOf(chat.history);
    sessions?.saw(sessionId, request.command ? `/${request.command} ${request.prompt}` : request.prompt);
    const result: NousChatResult = { metadata: { sessionId } };
    try {
      await state.withSession(sessionId, async () => {
        switch (request.command) {
          case "remember":
            return remember(request.prompt, sessionId, daemon, stream);
          case "recall":
            return recall(request.prompt, sessionId, daemon, state, stream);
          case "forget":
            return forget(request.prompt, daemon, stream);
          case "context":
            return showContext(request.prompt, sessionId, chat, daemon, state, stream);
          default:
            return answer(request, chat, sessionId, daemon, state, stream, token);
        }
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      daemon.log(`@nous failed: ${message}`);
      if (err instanceof vscode.LanguageModelError) {
        stream.markdown(`The language model could not answer: ${message}`);
      } else {
        stream.markdown(`Nous could not answer: ${message}`);
      }
      result.errorDetails = { message };
    }
    return result;
  };
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, handler);
  participant.iconPath = new vscode.ThemeIcon("book");
  return participant;
}

async function answer(
  request: vscode.ChatRequest,
  chat: vscode.ChatContext,
  sessionId: string,
  daemon: Daemon,
  state: State,
  stream: vscode.ChatResponseStream,
  token: vscode.CancellationToken,
): Promise<void> {
  const prompt = plainPrompt(request);
  stream.progress("Assembling project context…");
  const conversation = conversationOf(chat.history);
  const activeFile = vscode.window.activeTextEditor?.document.uri.toString();
  const context = await daemon.request<ContextResult>(NOUS_CONTEXT, {
    input: prompt,
    mode: "turn",
    sessionId,
    conversation,
    modelMaxTokens: request.model.maxInputTokens > 0 ? request.model.maxInputTokens : undefined,
    activeFile,
    conversationTokens: await conversationTokens(request.model, conversation, prompt, daemon, token),
  });
  const tally = state.injected(prompt, context);
  showReferences(stream, context);
  // a limit that refused the context: said in the answer, and the model answers without it
  if (context.limit) stream.markdown(`> **${refusal(context.limit)}** The model answers without project context.\n\n`);

  const messages: vscode.LanguageModelChatMessage[] = [];
  if (context.text.trim()) messages.push(vscode.LanguageModelChatMessage.User(PREAMBLE + context.text));
  for (const turn of chat.history.slice(-MAX_HISTORY)) {
    if (turn instanceof vscode.ChatRequestTurn) messages.push(vscode.LanguageModelChatMessage.User(turn.prompt));
    else {
      const text = responseText(turn);
      if (text) messages.push(vscode.LanguageModelChatMessage.Assistant(text));
    }
  }
  // Tools the user named with #nousRecall / #nousContext run first, with the prompt as input.
  for (const ref of request.toolReferences) {
    if (!ref.name.startsWith("nous_")) continue;
    stream.progress(`Running ${ref.name}…`);
    const input = ref.name === "nous_context" ? { task: prompt } : { query: prompt || "project context" };
    const output = await vscode.lm.invokeTool(
      ref.name,
      { input, toolInvocationToken: request.toolInvocationToken },
      token,
    );
    messages.push(vscode.LanguageModelChatMessage.User(`Result of ${ref.name}:\n${toolText(output)}`));
  }
  messages.push(vscode.LanguageModelChatMessage.User(prompt || request.prompt));

  const tools = vscode.lm.tools.filter((tool) => tool.name === "nous_recall" || tool.name === "nous_remember");
  let reply = "";
  for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
    const response = await request.model.sendRequest(
      messages,
      { tools, justification: "Answer with this project's memory from Nous." },
      token,
    );
    const calls: vscode.LanguageModelToolCallPart[] = [];
    let text = "";
    for await (const part of response.stream) {
      if (part instanceof vscode.LanguageModelTextPart) {
        stream.markdown(part.value);
        text += part.value;
      } else if (part instanceof vscode.LanguageModelToolCallPart) {
        calls.push(part);
      }
    }
    reply += text;
    if (calls.length === 0 || token.isCancellationRequested) break;
    const assistantParts: (vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart)[] = [];
    if (text) assistantParts.push(new vscode.LanguageModelTextPart(text));
    messages.push(vscode.LanguageModelChatMessage.Assistant([...assistantParts, ...calls]));
    for (const call of calls) {
      stream.progress(`Running ${call.name}…`);
      let content: (vscode.LanguageModelTextPart | vscode.LanguageModelPromptTsxPart | unknown)[];
      try {
        const output = await vscode.lm.invokeTool(
          call.name,
          { input: call.input, toolInvocationToken: request.toolInvocationToken },
          token,
        );
        content = output.content;
      } catch (err) {
        content = [new vscode.LanguageModelTextPart(`Error: ${err instanceof Error ? err.message : String(err)}`)];
      }
      messages.push(
        vscode.LanguageModelChatMessage.User([new vscode.LanguageModelToolResultPart(call.callId, content)]),
      );
    }
  }
  const last = state.lastManifest;
  stream.button({ command: "nous.showManifest", title: last ? summaryLine(last.result, last.tally) : summaryLine(context, tally) });
  if (reply.trim()) {
    try {
      state.judged(await daemon.request<FeedbackResult>(NOUS_FEEDBACK, { sessionId, response: reply }));
    } catch (err) {
      daemon.log(`feedback failed: ${String(err)}`);
    }
  }
  try {
    // the session's figures for the status bar's tooltip: referenced share, utilization, refreshes
    state.setStats(await daemon.request<StatsResult>(NOUS_STATS, { sessionId, activeFile }));
  } catch (err) {
    daemon.log(`stats failed: ${String(err)}`);
  }
}

/** The conversation's size as the chosen model counts it: the history sent to it and this
 * turn's prompt (`conversationTokens`: the context overhead of `nous stats`); unknown when the
 * model cannot count. */
async function conversationTokens(
  model: vscode.LanguageModelChat,
  conversation: Message[],
  prompt: string,
  daemon: Daemon,
  token: vscode.CancellationToken,
): Promise<number | undefined> {
  try {
    const counted = await model.countTokens([...conversation.map((m) => m.content), prompt].join("\n"), token);
    return Number.isInteger(counted) && counted >= 0 ? counted : undefined;
  } catch (err) {
    daemon.log(`counting the conversation's tokens failed: ${String(err)}`);
    return undefined;
  }
}

function toolText(result: vscode.LanguageModelToolResult): string {
  return result.content
    .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : ""))
    .join("");
}

async function remember(prompt: string, sessionId: string, daemon: Daemon, stream: vscode.ChatResponseStream): Promise<void> {
  const { kind, content } = parseRemember(prompt);
  if (!content) {
    stream.markdown("Usage: `/remember [kind:] text`, e.g. `/remember decision: we use SQLite for the store`.");
    return;
  }
  const result = await daemon.request<RememberResult>(NOUS_REMEMBER, { kind, content, source: `chat:${sessionId}` });
  const verb = result.status === "created" ? "Remembered" : "Already known; confirmed";
  stream.markdown(`${verb} **${kind}** \`${shortId(result.id)}\` (${result.memoryStatus}, ${result.scope}).`);
  if (result.redactions.length) stream.markdown(`\n\nRedacted before storing: ${result.redactions.join(", ")}.`);
}

async function recall(
  prompt: string,
  sessionId: string,
  daemon: Daemon,
  state: State,
  stream: vscode.ChatResponseStream,
): Promise<void> {
  const query = prompt.trim();
  if (!query) {
    stream.markdown("Usage: `/recall what you want to know`.");
    return;
  }
  const result = await daemon.request<ContextResult>(NOUS_RECALL, { query, sessionId });
  const tally = state.injected(`/recall ${query}`, result);
  if (result.limit) {
    stream.markdown(`**${refusal(result.limit)}**`);
    stream.button({ command: "nous.showManifest", title: "Show manifest" });
    return;
  }
  showReferences(stream, result);
  stream.markdown(result.text.trim() || "No memories matched.");
  stream.markdown(`\n\n*${summaryLine(result, tally)}*`);
  stream.button({ command: "nous.showManifest", title: "Show manifest" });
}

async function forget(prompt: string, daemon: Daemon, stream: vscode.ChatResponseStream): Promise<void> {
  const id = prompt.trim().split(/\s+/)[0] ?? "";
  if (!id) {
    stream.markdown("Usage: `/forget <memory id>` (ids are in the manifest: click the status bar).");
    return;
  }
  const result = await daemon.request<ForgetResult>(NOUS_FORGET, { id });
  stream.markdown(`Forgot \`${shortId(result.id)}\`: now ${result.status}.`);
}

async function showContext(
  prompt: string,
  sessionId: string,
  chat: vscode.ChatContext,
  daemon: Daemon,
  state: State,
  stream: vscode.ChatResponseStream,
): Promise<void> {
  const result = await daemon.request<ContextResult>(NOUS_CONTEXT, {
    input: prompt.trim(),
    mode: "turn",
    sessionId,
    conversation: conversationOf(chat.history),
    preview: true, // shown, not injected: no chat turn is kept, the session records nothing
  });
  state.injected(prompt.trim(), result, { preview: true });
  showReferences(stream, result);
  const titles = await droppedTitles(daemon, result);
  const manifest = new vscode.MarkdownString(
    linkIds(renderManifest(result, prompt.trim(), { titles, preview: true }), manifestIds(result)),
  );
  manifest.isTrusted = { enabledCommands: ["nous.showMemory"] };
  stream.markdown(manifest);
}

function manifestIds(result: ContextResult): string[] {
  return [...manifestItems(result).map((i) => i.id), ...result.dropped.map((d) => d.id)];
}
