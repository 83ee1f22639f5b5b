/** What a language-model tool call tells the daemon of its chat (design §10). Pure (no `vscode`
 * import). In agent mode Nous never sees the user's prompt or the model's reply: a tool is handed
 * only its input (the task or question the model passes on) and an opaque invocation token. The
 * input is the turn the daemon sees of that chat, kept through `nous/turn` under the chat's own
 * session: the token names the chat session (`sessionResource`, a URI, in VS Code ≥ 1.10x; a
 * `sessionId` string before), hashed into a session id here. */

import { createHash } from "node:crypto";
import type { ToolName, TurnParams } from "./protocol";

export const AGENT_SESSION_PREFIX = "vscode-agent-";

/** The tools whose input is reported as a turn, and which field holds it. `nous_remember` is not
 * among them: what it is given is stored as its own memory already (kept twice, it would only
 * confirm itself). */
const TURN_FIELD: Readonly<Record<ToolName, string>> = { nous_context: "task", nous_recall: "query" };

function isTurnTool(tool: string): tool is ToolName {
  return Object.prototype.hasOwnProperty.call(TURN_FIELD, tool);
}

function nameOf(value: unknown): string | undefined {
  if (typeof value === "string") return value || undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const text = String(value); // a vscode.Uri prints as its URI
  if (text && text !== "[object Object]") return text;
  const json = JSON.stringify(value);
  return json && json !== "{}" ? json : undefined;
}

/** The Nous session of the chat a tool invocation token belongs to, or undefined when the tool was
 * invoked outside a chat (no token, or one that names no session). The same chat always gives the
 * same id; the id is short and holds no `#` (a session id's rule). */
export function tokenSession(token: unknown): string | undefined {
  if (typeof token !== "object" || token === null) return undefined;
  const fields = token as Record<string, unknown>;
  const key = nameOf(fields["sessionResource"]) ?? nameOf(fields["sessionId"]);
  if (!key) return undefined;
  return AGENT_SESSION_PREFIX + createHash("sha256").update(key).digest("hex").slice(0, 20);
}

/** The turn a tool call's input stands for (`nous_context`'s task, `nous_recall`'s query: what the
 * chat asked of memory, on the user's behalf), or undefined when there is none. It names the tool
 * (`tool`), so the daemon applies a tool input's rules: a query is never kept, of a task only the
 * session notes it states (a decision, a next step). */
export function toolTurn(tool: string, input: unknown, sessionId: string): TurnParams | undefined {
  if (!isTurnTool(tool) || typeof input !== "object" || input === null) return undefined;
  const value = (input as Record<string, unknown>)[TURN_FIELD[tool]];
  const text = typeof value === "string" ? value.trim() : "";
  return text ? { sessionId, role: "user", text, tool } : undefined;
}
