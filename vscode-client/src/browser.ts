/** The memory browser (design §11): the Nous view container with two tree views — *Memories* (search,
 * filters, sort, paging through `nous/list`; project knowledge and what chat captured on its own
 * in two groups) and *Review* (what chat captured, with a badge) —, a
 * read-only record document per memory (`nous-memory:`), and the actions that change memory
 * through `nous/update`, `nous/forget` and `nous/supersede`. The rows and the record are built by
 * the pure `browserModel.ts`. */

import * as vscode from "vscode";
import {
  anchorLine,
  buildRows,
  contextValue,
  describeFilters,
  emptyFilters,
  fromOneLine,
  GROUP_LABELS,
  GROUPS,
  groupDescription,
  groupRows,
  NESTED_ROW_CHARS,
  idSpans,
  isFiltered,
  kindIcon,
  listParams,
  OUTCOMES,
  provenance,
  renderRecord,
  rowLabel,
  rowParts,
  rowTooltip,
  sourceLabel,
  useText,
  showMemoryLink,
  SORTS,
  SOURCE_TYPES,
  sourceTypeLabel,
  toOneLine,
  type Filters,
  type Group,
  type Row,
  type Sort,
} from "./browserModel";
import { MANIFEST_SCHEME } from "./commands";
import { showMarkdown } from "./preview";
import type { Daemon } from "./daemon";
import { KINDS, shortId } from "./manifest";
import {
  NOUS_FORGET,
  NOUS_LIST,
  NOUS_SUPERSEDE,
  NOUS_UPDATE,
  type ListedMemory,
  type ListParams,
  type ListResult,
  type SourceType,
  type UpdateParams,
  type UpdateResult,
} from "./protocol";

export const RECORD_SCHEME = "nous-memory";
const STATUSES = [
  "new", "confirmed", "core", "superseded", "inactive", "recorded", "pending", "reviewed", "active",
  "effective", "ineffective", "retired", "created", "escalated", "summarized", "archived",
];

type Target = Row | vscode.Uri | string | undefined;

class MemoryTree implements vscode.TreeDataProvider<Row> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  rows: Row[] = [];
  private shown = "";

  constructor(private readonly review: boolean) {}

  /** New rows; the view redraws only when they differ from what it shows (a redraw while the
   * user unfolds a group can lose the unfolding, and most refreshes change nothing). */
  set(rows: Row[]): void {
    this.rows = rows;
    const key = JSON.stringify(rows);
    if (key === this.shown) return;
    this.shown = key;
    this.changed.fire();
  }

  getChildren(element?: Row): Row[] {
    if (!element) return this.rows;
    return element.type === "group" ? element.children : [];
  }

  getTreeItem(row: Row): vscode.TreeItem {
    if (row.type === "group") {
      const { label, icon, tooltip } = GROUP_LABELS[row.group];
      // project knowledge open; chat captures folded away until asked for
      const state = row.group === "knowledge" ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
      const item = new vscode.TreeItem(label, state);
      item.id = `group:${row.group}`;
      item.description = groupDescription(row);
      item.iconPath = new vscode.ThemeIcon(icon);
      item.tooltip = tooltip;
      item.contextValue = `group ${row.group}`;
      return item;
    }
    if (row.type === "empty") {
      const item = new vscode.TreeItem(row.message);
      item.iconPath = new vscode.ThemeIcon("info");
      item.contextValue = "empty";
      return item;
    }
    if (row.type === "more") {
      const item = new vscode.TreeItem(`Load more… (${row.shown} of ${row.total})`);
      item.iconPath = new vscode.ThemeIcon("ellipsis");
      item.id = `more:${row.group ?? ""}:${row.offset}`;
      item.command = { command: "nous.browser.loadMore", title: "Load More", arguments: [row.offset, row.group] };
      item.contextValue = "more";
      return item;
    }
    const m = row.memory;
    // at the default side-bar width: the kind (icon), the first words, the status and the source;
    // everything else in the tooltip
    const { title, description } = rowParts(m, row.group ? NESTED_ROW_CHARS : undefined);
    const item = new vscode.TreeItem(title);
    item.id = (this.review ? "review:" : "memory:") + m.id;
    item.description = description;
    item.iconPath = new vscode.ThemeIcon(
      kindIcon(m.kind, m.pinned),
      m.excluded ? new vscode.ThemeColor("disabledForeground") : undefined,
    );
    const parts = rowTooltip(m, new Date());
    const tip = new vscode.MarkdownString(undefined, true);
    tip.appendMarkdown(parts.head);
    tip.appendText(parts.text);
    tip.appendMarkdown(parts.foot);
    item.tooltip = tip;
    item.contextValue = contextValue(m, this.review);
    item.accessibilityInformation = { label: `${m.kind}, ${m.status}: ${rowLabel(m)}. From ${sourceLabel(m.source)}; ${useText(m, new Date())}` };
    item.command = { command: "nous.showMemory", title: "Open Memory", arguments: [m.id] };
    return item;
  }
}

export class MemoryBrowser implements vscode.Disposable {
  private filters: Filters = emptyFilters();
  private pages: Record<Group, ListResult[]> = { knowledge: [], captured: [] };
  private readonly memories = new MemoryTree(false);
  private readonly review = new MemoryTree(true);
  private readonly memoriesView: vscode.TreeView<Row>;
  private readonly reviewView: vscode.TreeView<Row>;
  private readonly records = new Map<string, ListedMemory>();
  private readonly recordChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly disposables: vscode.Disposable[] = [];
  reviewPending = 0;
  private reloading?: Promise<void>;
  private reloadAgain?: Promise<void>;

  constructor(private readonly daemon: Daemon) {
    this.memoriesView = vscode.window.createTreeView("nous.memories", { treeDataProvider: this.memories });
    this.reviewView = vscode.window.createTreeView("nous.review", { treeDataProvider: this.review });
    this.disposables.push(
      this.memoriesView,
      this.reviewView,
      this.recordChanged,
      vscode.workspace.registerTextDocumentContentProvider(RECORD_SCHEME, {
        onDidChange: this.recordChanged.event,
        provideTextDocumentContent: (uri) => {
          const memory = this.records.get(recordId(uri));
          const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
          return memory ? renderRecord(memory, new Date(), root) : "This memory is no longer in this project's memory.";
        },
      }),
      this.memoriesView.onDidChangeVisibility((e) => e.visible && void this.refresh()),
      vscode.window.tabGroups.onDidChangeTabs(() => this.trackActiveRecord()),
      vscode.window.tabGroups.onDidChangeTabGroups(() => this.trackActiveRecord()),
      // the manifest's short ids open the memory's record
      vscode.languages.registerDocumentLinkProvider({ scheme: MANIFEST_SCHEME }, {
        provideDocumentLinks: (document) =>
          idSpans(document.getText()).map(([line, column, short]) => {
            const link = new vscode.DocumentLink(
              new vscode.Range(line, column, line, column + short.length),
              vscode.Uri.parse(showMemoryLink(short)),
            );
            link.tooltip = "Open this memory in the Nous memory browser";
            return link;
          }),
      }),
      ...this.registerCommands(),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** What the list shows now (for the end-to-end test): `ids` of both groups, `captured` those of
   * the Captured from chat group. */
  snapshot(): {
    filters: Filters;
    ids: string[];
    captured: string[];
    total: number;
    totals: Record<Group, number>;
    reviewPending: number;
    review: string[];
  } {
    const ids = (rows: Row[]): string[] =>
      rows.flatMap((r) => (r.type === "memory" ? [r.memory.id] : r.type === "group" ? ids(r.children) : []));
    const totals = { knowledge: this.total("knowledge"), captured: this.total("captured") };
    const captured = this.memories.rows.find((r) => r.type === "group" && r.group === "captured");
    return {
      filters: this.filters,
      ids: ids(this.memories.rows),
      captured: captured ? ids([captured]) : [],
      total: totals.knowledge + totals.captured,
      totals,
      reviewPending: this.reviewPending,
      review: ids(this.review.rows),
    };
  }

  private total(group: Group): number {
    return this.pages[group].at(-1)?.total ?? 0;
  }

  private list(params: ListParams): Promise<ListResult> {
    return this.daemon.request<ListResult>(NOUS_LIST, { ...params, activeFile: activeFile() });
  }

  /** Reload the list and the review queue. One reload at a time: a call while one is under way
   * (the view shown and Open Memory Browser at once, a budget notification during an edit) gets
   * one more reload after it, shared with every call meanwhile, so the last reload to land
   * started after the last call (an older one finishing late cannot put stale rows back). */
  refresh(): Promise<void> {
    if (!this.reloading) {
      this.reloading = this.reload().finally(() => (this.reloading = undefined));
      return this.reloading;
    }
    this.reloadAgain ??= this.reloading.then(() => {
      this.reloadAgain = undefined;
      return this.refresh();
    });
    return this.reloadAgain;
  }

  private async reload(): Promise<void> {
    if (!this.daemon.isRunning) return;
    try {
      const filters = this.filters;
      const pages = { ...this.pages };
      for (const group of GROUPS) {
        const loaded = this.pages[group].reduce((n, p) => n + p.items.length, 0);
        pages[group] = [await this.list(listParams(filters, 0, Math.max(loaded, 50), group))];
      }
      if (filters !== this.filters) return; // filtered anew meanwhile: the reload after this one shows it
      this.pages = pages;
      this.memories.set(groupRows(this.pages, isFiltered(this.filters)));
      const queue = await this.list({ review: true, limit: 200, sort: "recent" });
      this.review.set(buildRows([queue], false, true));
      this.setBadge(queue.reviewPending);
      const described = describeFilters(this.filters);
      const total = this.total("knowledge") + this.total("captured");
      this.memoriesView.description = described ? `${total} · ${described}` : `${total}`;
      this.memoriesView.message = isFiltered(this.filters) ? `Filtered: ${described}` : undefined;
      void vscode.commands.executeCommand("setContext", "nous.browser.filtered", isFiltered(this.filters));
      for (const id of this.records.keys()) await this.reloadRecord(id);
    } catch (err) {
      this.daemon.log(`memory browser: ${String(err)}`);
    }
  }

  private setBadge(n: number): void {
    this.reviewPending = n;
    const badge = n > 0 ? { value: n, tooltip: `${n} chat ${n === 1 ? "capture" : "captures"} to review` } : undefined;
    this.reviewView.badge = badge;
    this.reviewView.description = n > 0 ? `${n} to review` : undefined;
  }

  private async loadMore(offset: number, group: Group): Promise<void> {
    const page = await this.list(listParams(this.filters, offset, undefined, group));
    this.pages[group].push(page);
    this.memories.set(groupRows(this.pages, isFiltered(this.filters)));
  }

  private async setFilters(filters: Filters): Promise<void> {
    this.filters = filters;
    this.pages = { knowledge: [], captured: [] };
    await this.refresh();
  }

  // -- the record -------------------------------------------------------------------------------

  async show(idOrPrefix: string): Promise<void> {
    const memory = await this.fetch(idOrPrefix);
    if (!memory) {
      void vscode.window.showWarningMessage(`Nous: no memory ${idOrPrefix} in this project's memory.`);
      return;
    }
    this.records.delete(memory.id);
    this.records.set(memory.id, memory);
    // records stay live (refreshed after each change) for the last few opened only
    for (const old of [...this.records.keys()].slice(0, Math.max(0, this.records.size - 10))) this.records.delete(old);
    const uri = recordUri(memory);
    this.recordChanged.fire(uri);
    await showMarkdown(uri);
    this.trackActiveRecord();
  }

  /** The memory whose record is the active editor tab (its Markdown preview, titled “Preview
   * Memory 1a2b3c4d.md”, or its source), or undefined; kept in the `nous.recordActive` context
   * key for the record's title-bar actions. */
  private activeRecord(): string | undefined {
    const open = vscode.window.activeTextEditor?.document.uri;
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    if (tab?.input instanceof vscode.TabInputText && tab.input.uri.scheme === RECORD_SCHEME) return recordId(tab.input.uri);
    if (tab?.input instanceof vscode.TabInputWebview) {
      const short = /Memory ([0-9a-f]{8})\.md\b/.exec(tab.label)?.[1];
      if (short) return [...this.records.keys()].reverse().find((id) => id.startsWith(short));
      return undefined;
    }
    return open?.scheme === RECORD_SCHEME ? recordId(open) : undefined;
  }

  private trackActiveRecord(): void {
    void vscode.commands.executeCommand("setContext", "nous.recordActive", this.activeRecord() !== undefined);
  }

  private async fetch(idOrPrefix: string): Promise<ListedMemory | undefined> {
    const exact = await this.list({ ids: [idOrPrefix], history: true, limit: 1 });
    if (exact.items[0]) return exact.items[0];
    if (!/^[0-9a-f]{4,31}$/.test(idOrPrefix)) return undefined;
    const prefixed = await this.list({ query: idOrPrefix, limit: 2 });
    const only = prefixed.items.filter((m) => m.id.startsWith(idOrPrefix));
    if (only.length !== 1) return undefined;
    return (await this.list({ ids: [only[0]!.id], history: true, limit: 1 })).items[0];
  }

  private async reloadRecord(id: string): Promise<void> {
    const found = (await this.list({ ids: [id], history: true, limit: 1 })).items[0];
    if (found) this.records.set(id, found);
    else this.records.delete(id);
    this.recordChanged.fire(recordUri({ id }));
  }

  // -- actions ----------------------------------------------------------------------------------

  private async target(arg: Target): Promise<ListedMemory | undefined> {
    let id: string | undefined;
    if (typeof arg === "string") id = arg;
    else if (arg instanceof vscode.Uri) id = recordId(arg);
    else if (arg && arg.type === "memory") id = arg.memory.id;
    else {
      // a keybinding in a view passes nothing: the view's selection, else the open record
      const selected = [...this.memoriesView.selection, ...this.reviewView.selection].find((r) => r.type === "memory");
      if (selected?.type === "memory" && (this.memoriesView.visible || this.reviewView.visible)) id = selected.memory.id;
      else id = this.activeRecord();
    }
    if (!id) {
      void vscode.window.showInformationMessage("Nous: pick a memory in the Nous view first.");
      return undefined;
    }
    return this.fetch(id);
  }

  private async update(params: UpdateParams, done: string): Promise<void> {
    const result = await this.daemon.request<UpdateResult>(NOUS_UPDATE, { ...params, activeFile: activeFile() });
    const redacted = result.redactions.length ? ` (redacted: ${result.redactions.join(", ")})` : "";
    const what = result.changed.length ? result.changed.join(", ") : "nothing changed";
    vscode.window.setStatusBarMessage(`Nous: ${done} ${shortId(result.memory.id)}: ${what}${redacted}`, 5000);
    if (redacted) void vscode.window.showInformationMessage(`Nous: ${done}${redacted}.`);
    await this.refresh();
  }

  private async edit(m: ListedMemory): Promise<void> {
    const choices: (vscode.QuickPickItem & { field: string })[] = [
      { field: "content", label: "$(edit) Text", description: "re-embedded" },
      { field: "kind", label: "$(symbol-class) Kind", description: m.kind },
      { field: "scope", label: "$(globe) Scope", description: m.scope },
      { field: "tags", label: "$(tag) Tags", description: m.tags.join(", ") || "none" },
      { field: "importance", label: "$(star) Importance", description: m.importance.toFixed(2) },
      { field: "status", label: "$(git-commit) Status", description: `${m.status} → ${m.nextStatuses.join(", ") || "final"}` },
    ];
    // an edit stays open when focus moves (a chat reply, a view refreshing): closing it would lose what was typed
    const pick = await vscode.window.showQuickPick(choices, { title: `Edit ${m.kind} ${shortId(m.id)}`, placeHolder: "What to change", ignoreFocusOut: true });
    if (!pick) return;
    if (pick.field === "content") {
      const value = await vscode.window.showInputBox({
        title: `Edit the text of ${m.kind} ${shortId(m.id)}`,
        prompt: "The new text (line breaks show as ⏎); it is redacted, re-rendered and re-embedded",
        value: toOneLine(m.content),
        validateInput: (v) => (v.trim() ? undefined : "The text cannot be empty"),
        ignoreFocusOut: true,
      });
      if (value !== undefined) await this.update({ id: m.id, content: fromOneLine(value) }, "edited");
    } else if (pick.field === "kind") {
      const kind = await vscode.window.showQuickPick([...KINDS], { title: "Kind", placeHolder: m.kind });
      if (kind) await this.update({ id: m.id, kind }, "edited");
    } else if (pick.field === "scope") {
      const scope = await vscode.window.showQuickPick(["project", "language", "universal"], { title: "Scope", placeHolder: m.scope });
      if (scope) await this.update({ id: m.id, scope }, "edited");
    } else if (pick.field === "tags") {
      const value = await vscode.window.showInputBox({ title: "Tags", prompt: "Comma-separated", value: m.tags.join(", "), ignoreFocusOut: true });
      if (value !== undefined) await this.update({ id: m.id, tags: value.split(",").map((t) => t.trim()).filter(Boolean) }, "edited");
    } else if (pick.field === "importance") {
      const value = await vscode.window.showInputBox({
        title: "Importance",
        prompt: "Between 0 and 1",
        value: m.importance.toFixed(2),
        validateInput: (v) => (/^(0(\.\d+)?|1(\.0+)?)$/.test(v.trim()) ? undefined : "A number between 0 and 1"),
        ignoreFocusOut: true,
      });
      if (value !== undefined) await this.update({ id: m.id, importance: Number(value) }, "edited");
    } else if (pick.field === "status") {
      if (!m.nextStatuses.length) {
        void vscode.window.showInformationMessage(`Nous: a ${m.kind} in state ${m.status} cannot change state.`);
        return;
      }
      const status = await vscode.window.showQuickPick(m.nextStatuses, { title: `Status of this ${m.kind}`, placeHolder: `now ${m.status}` });
      if (status) await this.update({ id: m.id, status }, "edited");
    }
  }

  private async forget(m: ListedMemory, purge: boolean, ask = true): Promise<void> {
    if (purge && m.kind === "decision") {
      void vscode.window.showWarningMessage("Nous: decisions are never deleted; forget marks them inactive.");
      return;
    }
    if (ask) {
      const verb = purge ? "Purge" : "Forget";
      const detail = purge
        ? "The memory and its usage history are deleted for good."
        : "It leaves the list (filter on the status inactive to see it) and is never injected again.";
      const answer = await vscode.window.showWarningMessage(`${verb} “${rowLabel(m)}”?`, { modal: true, detail }, verb);
      if (answer !== verb) return;
    }
    await this.daemon.request(NOUS_FORGET, { id: m.id, purge });
    vscode.window.setStatusBarMessage(`Nous: ${purge ? "purged" : "forgot"} ${shortId(m.id)}`, 5000);
    await this.refresh();
  }

  private async supersede(m: ListedMemory): Promise<void> {
    const candidates = await this.list({ limit: 200, sort: "recent", statuses: undefined });
    const items = candidates.items
      .filter((c) => c.id !== m.id && !c.excluded)
      .sort((a, b) => Number(b.kind === m.kind) - Number(a.kind === m.kind))
      .map((c) => ({ label: rowLabel(c), description: `${c.kind} · ${c.status} · ${shortId(c.id)}`, id: c.id }));
    const pick = await vscode.window.showQuickPick(items, {
      title: `Superseded by… (${m.kind} ${shortId(m.id)})`,
      placeHolder: "The newer memory that replaces this one",
      matchOnDescription: true,
    });
    if (!pick) return;
    await this.daemon.request(NOUS_SUPERSEDE, { id: m.id, newId: pick.id });
    await this.refresh();
  }

  private async openSource(m: ListedMemory): Promise<void> {
    const p = provenance(m.source);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (p.type !== "file" || !folder) {
      void vscode.window.showInformationMessage(`Nous: this memory came from ${m.source}, not a file.`);
      return;
    }
    const document = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, p.path));
    const line = anchorLine(document.getText(), p.fragment);
    const position = new vscode.Position(line, 0);
    await vscode.window.showTextDocument(document, { selection: new vscode.Range(position, position) });
  }

  private async filter(): Promise<void> {
    type Pick = vscode.QuickPickItem & { group?: "kind" | "status" | "source" | "since"; value?: string };
    const f = this.filters;
    const items: Pick[] = [
      { label: "Source", kind: vscode.QuickPickItemKind.Separator },
      ...SOURCE_TYPES.map((t): Pick => ({ label: sourceTypeLabel(t), group: "source", value: t, picked: f.sourceTypes.includes(t) })),
      { label: "Kind", kind: vscode.QuickPickItemKind.Separator },
      ...KINDS.map((k): Pick => ({ label: k, group: "kind", value: k, picked: f.kinds.includes(k) })),
      { label: "Status", kind: vscode.QuickPickItemKind.Separator },
      ...STATUSES.map((s): Pick => ({ label: s, group: "status", value: s, picked: f.statuses.includes(s) })),
      { label: "Captured", kind: vscode.QuickPickItemKind.Separator },
      ...[1, 7, 30].map((d): Pick => ({ label: `in the last ${d === 1 ? "day" : `${d} days`}`, group: "since", value: String(d), picked: f.since === sinceDays(d) })),
    ];
    const picked = await vscode.window.showQuickPick(items, { title: "Filter memories", canPickMany: true, placeHolder: "Kinds, statuses, sources" });
    if (!picked) return;
    const of = (g: Pick["group"]): string[] => picked.filter((p) => p.group === g).map((p) => p.value!);
    const days = of("since").map(Number);
    await this.setFilters({
      ...f,
      kinds: of("kind"),
      statuses: of("status"),
      sourceTypes: of("source") as SourceType[],
      since: days.length ? sinceDays(Math.min(...days)) : undefined,
    });
  }

  private registerCommands(): vscode.Disposable[] {
    const run =
      (what: string, body: (arg: Target, ...rest: unknown[]) => Promise<void>) =>
      async (arg: Target, ...rest: unknown[]): Promise<void> => {
        try {
          await body(arg, ...rest);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          this.daemon.log(`${what} failed: ${message}`);
          void vscode.window.showErrorMessage(`Nous: ${what} failed: ${message}`);
        }
      };
    const onMemory = (what: string, body: (m: ListedMemory) => Promise<void>) =>
      run(what, async (arg) => {
        const m = await this.target(arg);
        if (m) await body(m);
      });
    const command = vscode.commands.registerCommand;
    return [
      command("nous.openBrowser", run("Open Memory Browser", async () => {
        await vscode.commands.executeCommand("nous.memories.focus");
        await this.refresh();
      })),
      command("nous.showMemory", run("Show Memory", async (arg) => {
        const id = typeof arg === "string" ? arg : (await this.target(arg))?.id;
        if (id) await this.show(id);
      })),
      command("nous.browser.refresh", run("Refresh", () => this.refresh())),
      command("nous.browser.search", run("Search", async () => {
        const query = await vscode.window.showInputBox({
          title: "Search memories",
          prompt: "Words in the text or tags (prefixes), an id prefix, or a source file",
          value: this.filters.query ?? "",
        });
        if (query !== undefined) await this.setFilters({ ...this.filters, query: query.trim() || undefined });
      })),
      command("nous.browser.filter", run("Filter", () => this.filter())),
      command("nous.browser.sort", run("Sort", async () => {
        const labels: Record<Sort, string> = { recent: "Most recent first", use: "Most used first", score: "Best score first" };
        const pick = await vscode.window.showQuickPick(
          SORTS.map((s) => ({ label: labels[s], sort: s, picked: s === this.filters.sort })),
          { title: "Sort memories" },
        );
        if (pick) await this.setFilters({ ...this.filters, sort: pick.sort });
      })),
      command("nous.browser.clearFilters", run("Clear Filters", () => this.setFilters({ ...emptyFilters(), sort: this.filters.sort }))),
      command("nous.browser.loadMore", run("Load More", async (arg, group) =>
        this.loadMore(Number(arg), group === "captured" ? "captured" : "knowledge"),
      )),
      command("nous.memory.edit", onMemory("Edit", (m) => this.edit(m))),
      command("nous.memory.pin", onMemory("Pin", (m) => this.update({ id: m.id, pinned: true }, "pinned"))),
      command("nous.memory.unpin", onMemory("Unpin", (m) => this.update({ id: m.id, pinned: false }, "unpinned"))),
      command("nous.memory.forget", onMemory("Forget", (m) => this.forget(m, false))),
      command("nous.memory.purge", onMemory("Purge", (m) => this.forget(m, true))),
      command("nous.memory.supersede", onMemory("Supersede", (m) => this.supersede(m))),
      command("nous.memory.outcome", onMemory("Set Outcome", async (m) => {
        const outcome = await vscode.window.showQuickPick([...OUTCOMES], { title: `Outcome of this ${m.kind}`, placeHolder: m.outcome ?? "none yet" });
        if (outcome) await this.update({ id: m.id, outcome: outcome as (typeof OUTCOMES)[number] }, "outcome set on");
      })),
      command("nous.memory.openSource", onMemory("Open Source", (m) => this.openSource(m))),
      command("nous.review.keep", onMemory("Keep", (m) => this.update({ id: m.id, reviewed: true }, "kept"))),
      command("nous.review.discard", onMemory("Discard", (m) => this.forget(m, false, false))),
    ];
  }
}

function sinceDays(days: number): string {
  const d = new Date(Date.now() - days * 86_400_000);
  return d.toISOString().slice(0, 10);
}

function activeFile(): string | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  return uri?.scheme === "file" ? uri.toString() : undefined;
}

function recordUri(m: Pick<ListedMemory, "id">): vscode.Uri {
  return vscode.Uri.from({ scheme: RECORD_SCHEME, path: `/Memory ${shortId(m.id)}.md`, query: m.id });
}

function recordId(uri: vscode.Uri): string {
  return uri.query;
}
