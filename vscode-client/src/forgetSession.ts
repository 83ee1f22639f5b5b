/** “Nous: Forget Chat Session…”: the `@nous` sessions this workspace saw (kept in the workspace
 * state), a modal confirmation, then `nous/forgetSession` removes the session's turns and the
 * session notes drawn from them. */

import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import { NOUS_FORGET_SESSION, type ForgetSessionResult } from "./protocol";
import { forgottenMessage, restoreSessions, sawSession, sessionPick, withoutSession, type SeenSession } from "./sessions";

const KEY = "nous.chatSessions";

/** The recent `@nous` sessions of this workspace, most recent first. */
export class ChatSessions {
  constructor(private readonly memento: vscode.Memento) {}

  list(): SeenSession[] {
    return restoreSessions(this.memento.get(KEY));
  }

  saw(id: string, prompt: string): void {
    void this.memento.update(KEY, sawSession(this.list(), id, prompt, Date.now()));
  }

  forgot(id: string): void {
    void this.memento.update(KEY, withoutSession(this.list(), id));
  }
}

export function registerForgetSession(daemon: Daemon, sessions: ChatSessions): vscode.Disposable {
  return vscode.commands.registerCommand("nous.forgetSession", async (given?: unknown) => {
    try {
      const picked = typeof given === "string" && given ? { id: given, title: given } : await pickSession(sessions);
      if (!picked) return;
      const confirm = await vscode.window.showWarningMessage(
        `Forget the chat session “${picked.title}”?`,
        {
          modal: true,
          detail:
            "Its chat turns and the session notes drawn from them are removed from Nous memory on this machine, for good. Other memories stay.",
        },
        "Forget",
      );
      if (confirm !== "Forget") return;
      const result = await daemon.request<ForgetSessionResult>(NOUS_FORGET_SESSION, { sessionId: picked.id });
      sessions.forgot(picked.id);
      void vscode.window.showInformationMessage(forgottenMessage(result.forgotten, picked.title));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      daemon.log(`Forget Chat Session failed: ${message}`);
      void vscode.window.showErrorMessage(`Nous: Forget Chat Session failed: ${message}`);
    }
  });
}

async function pickSession(sessions: ChatSessions): Promise<{ id: string; title: string } | undefined> {
  const now = Date.now();
  const other = { label: "$(edit) Enter a session id…", description: "", detail: "", id: "" };
  const picks = [...sessions.list().map((s) => ({ ...sessionPick(s, now), id: s.id })), other];
  const pick = await vscode.window.showQuickPick(picks, {
    title: "Nous: Forget Chat Session…",
    placeHolder: "A recent @nous chat session (its first prompt), or enter a session id",
    matchOnDetail: true,
    // a deliberate, destructive choice: a focus change (a chat reply landing, a view taking focus)
    // does not close the pick under the user's click; Escape does
    ignoreFocusOut: true,
  });
  if (!pick) return undefined;
  if (pick.id) return { id: pick.id, title: pick.label };
  const id = (await vscode.window.showInputBox({ title: "Nous: Forget Chat Session…", prompt: "Session id (vscode-chat-…)", ignoreFocusOut: true }))?.trim();
  return id ? { id, title: id } : undefined;
}
