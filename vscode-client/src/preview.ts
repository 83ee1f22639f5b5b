/** Documents Nous writes (manifests, memory records) open rendered, in VS Code's own Markdown
 * preview: tables, code and links drawn by the built-in renderer, which sanitizes what it shows
 * (a memory's text is data, never markup that runs), with no renderer of our own. */

import * as vscode from "vscode";

/** Opens `uri` (a `nous-*:` document from a content provider) in the Markdown preview, in the
 * active editor group; falls back to the Markdown source when the preview is unavailable (the
 * built-in Markdown extension disabled). */
export async function showMarkdown(uri: vscode.Uri): Promise<void> {
  const document = await vscode.workspace.openTextDocument(uri);
  try {
    await vscode.commands.executeCommand("markdown.showPreview", uri);
  } catch {
    await vscode.languages.setTextDocumentLanguage(document, "markdown");
    await vscode.window.showTextDocument(document, { preview: true });
  }
}
