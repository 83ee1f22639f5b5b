/** Palette commands: Show Context for…, Remember Selection As…, Recall…, Forget…, Restart
 * Server, Show Last Manifest. Manifests open rendered, in the Markdown preview. */

import * as vscode from "vscode";
import type { Daemon } from "./daemon";
import { rowLabel } from "./browserModel";
import { items, KINDS, renderManifest, shortId, type ManifestExtras } from "./manifest";
import { showMarkdown } from "./preview";
import {
  NOUS_CONTEXT,
  NOUS_FORGET,
  NOUS_LIST,
  NOUS_RECALL,
  NOUS_REMEMBER,
  type ContextResult,
  type ForgetResult,
  type ListResult,
  type RememberResult,
} from "./protocol";
import type { Manifest, State } from "./state";

/** Manifests open as read-only `nous-manifest:` documents (no save prompt on close). */
export const MANIFEST_SCHEME = "nous-manifest";
const documents = new Map<string, string>();
let opened = 0;

export const manifestProvider: vscode.TextDocumentContentProvider = {
  provideTextDocumentContent: (uri) => documents.get(uri.toString()) ?? "This manifest is no longer available.",
};

async function showDocument(content: string): Promise<void> {
  opened += 1;
  const uri = vscode.Uri.from({ scheme: MANIFEST_SCHEME, path: "/Nous manifest.md", query: String(opened) });
  documents.set(uri.toString(), content);
  if (documents.size > 20) documents.delete(documents.keys().next().value as string);
  await showMarkdown(uri);
}

/** The titles of the memories an answer dropped (its manifest names them, not only their ids),
 * from `nous/list`; none when the daemon cannot say. */
export async function droppedTitles(daemon: Daemon, result: ContextResult): Promise<Map<string, string>> {
  const ids = [...new Set(result.dropped.map((d) => d.id))].slice(0, 200);
  const titles = new Map<string, string>();
  if (ids.length === 0) return titles;
  try {
    const found = await daemon.request<ListResult>(NOUS_LIST, { ids, limit: ids.length });
    for (const m of found.items) titles.set(m.id, rowLabel(m));
  } catch (err) {
    daemon.log(`the dropped memories' titles: ${String(err)}`);
  }
  return titles;
}

async function showManifest(daemon: Daemon, manifest: Manifest): Promise<void> {
  const extras: ManifestExtras = {
    titles: await droppedTitles(daemon, manifest.result),
    tally: manifest.tally,
    preview: manifest.preview,
    judged: manifest.judged,
  };
  await showDocument(renderManifest(manifest.result, manifest.title, extras));
}

function reportError(daemon: Daemon, what: string, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  daemon.log(`${what} failed: ${message}`);
  void vscode.window.showErrorMessage(`Nous: ${what} failed: ${message}`);
}

export function registerCommands(daemon: Daemon, state: State): vscode.Disposable[] {
  const run =
    (what: string, body: () => Promise<void>) =>
    async (): Promise<void> => {
      try {
        await body();
      } catch (err) {
        reportError(daemon, what, err);
      }
    };

  return [
    vscode.workspace.registerTextDocumentContentProvider(MANIFEST_SCHEME, manifestProvider),
    vscode.commands.registerCommand(
      "nous.showContext",
      run("Show Context", async () => {
        const input = await vscode.window.showInputBox({
          title: "Nous: Show Context for…",
          prompt: "A question or task; Nous shows what it would inject and why",
        });
        if (input === undefined) return;
        const result = await daemon.request<ContextResult>(NOUS_CONTEXT, {
          input,
          mode: "turn",
          sessionId: state.windowSession,
          activeFile: vscode.window.activeTextEditor?.document.uri.toString(),
          preview: true, // shown, not injected: no chat turn is kept
        });
        state.injected(input, result, { preview: true });
        if (state.lastManifest) await showManifest(daemon, state.lastManifest);
      }),
    ),
    vscode.commands.registerCommand(
      "nous.rememberSelection",
      run("Remember Selection", async () => {
        const editor = vscode.window.activeTextEditor;
        const text = editor?.document.getText(editor.selection).trim();
        if (!editor || !text) {
          void vscode.window.showInformationMessage("Nous: select the text to remember first.");
          return;
        }
        const kind = await vscode.window.showQuickPick([...KINDS], {
          title: "Nous: Remember Selection As…",
          placeHolder: "What sort of memory is this?",
        });
        if (!kind) return;
        const relative = vscode.workspace.asRelativePath(editor.document.uri, false);
        const line = editor.selection.start.line + 1;
        const result = await daemon.request<RememberResult>(NOUS_REMEMBER, {
          kind,
          content: text,
          source: `file:${relative}#L${line}`,
        });
        void vscode.window.showInformationMessage(
          `Nous: ${result.status === "created" ? "remembered" : "confirmed"} ${kind} ${shortId(result.id)}` +
            (result.redactions.length ? ` (redacted: ${result.redactions.join(", ")})` : ""),
        );
      }),
    ),
    vscode.commands.registerCommand(
      "nous.recall",
      run("Recall", async () => {
        const query = await vscode.window.showInputBox({ title: "Nous: Recall…", prompt: "What do you want to know?" });
        if (!query?.trim()) return;
        const result = await daemon.request<ContextResult>(NOUS_RECALL, { query, sessionId: state.windowSession });
        state.injected(`recall: ${query}`, result);
        if (state.lastManifest) await showManifest(daemon, state.lastManifest);
      }),
    ),
    vscode.commands.registerCommand(
      "nous.forget",
      run("Forget", async () => {
        const recent = state.lastManifest ? items(state.lastManifest.result) : [];
        const other = { label: "$(edit) Enter a memory id…", id: "" };
        const picks = [
          ...recent.map((item) => ({ label: item.text.slice(0, 80), description: `${item.kind} ${shortId(item.id)}`, id: item.id })),
          other,
        ];
        const pick = await vscode.window.showQuickPick(picks, {
          title: "Nous: Forget…",
          placeHolder: "A memory from the last manifest, or enter an id",
        });
        if (!pick) return;
        const id = pick.id || (await vscode.window.showInputBox({ title: "Nous: Forget…", prompt: "Memory id" }))?.trim();
        if (!id) return;
        const result = await daemon.request<ForgetResult>(NOUS_FORGET, { id });
        void vscode.window.showInformationMessage(`Nous: forgot ${shortId(result.id)} (now ${result.status}).`);
      }),
    ),
    vscode.commands.registerCommand(
      "nous.restartServer",
      run("Restart Server", async () => {
        await daemon.restart();
      }),
    ),
    vscode.commands.registerCommand(
      "nous.showManifest",
      run("Show Last Manifest", async () => {
        const last = state.lastManifest;
        if (!last) {
          void vscode.window.showInformationMessage(
            "Nous: nothing was injected in this window yet. Ask @nous in the chat, or run “Nous: Show Context for…”.",
          );
          return;
        }
        await showManifest(daemon, last);
      }),
    ),
  ];
}
