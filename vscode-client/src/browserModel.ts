/** The memory browser's pure logic (design §11): filters → `nous/list` params, the rows of the tree
 * (labels, descriptions, icons, context values), a memory's provenance, and the record document.
 * No `vscode` import: unit-tested with node:test. */

import { cell as tableCell, inlineCode, plain } from "./markdown";
import type { ListedMemory, ListParams, ListResult, SourceType } from "./protocol";

export type Sort = "recent" | "use" | "score";

export interface Filters {
  query?: string;
  kinds: string[];
  statuses: string[];
  sourceTypes: SourceType[];
  scope?: string;
  since?: string;
  sort: Sort;
}

export const PAGE_SIZE = 50;
export const SOURCE_TYPES: readonly SourceType[] = ["file", "commit", "chat", "manual"];
export const SORTS: readonly Sort[] = ["recent", "use", "score"];
export const OUTCOMES = ["success", "partial", "pending", "failure"] as const;

export function emptyFilters(): Filters {
  return { kinds: [], statuses: [], sourceTypes: [], sort: "recent" };
}

export function isFiltered(f: Filters): boolean {
  return Boolean(f.query || f.kinds.length || f.statuses.length || f.sourceTypes.length || f.scope || f.since);
}

/** The `nous/list` params of one page (empty filters are left out); `group` lists only project
 * knowledge or only chat captures. */
export function listParams(f: Filters, offset: number, limit = PAGE_SIZE, group?: Group): ListParams {
  const params: ListParams = { sort: f.sort, offset, limit };
  if (group) params.captured = group === "captured";
  if (f.query?.trim()) params.query = f.query.trim();
  if (f.kinds.length) params.kinds = [...f.kinds];
  if (f.statuses.length) params.statuses = [...f.statuses];
  if (f.sourceTypes.length) params.sourceTypes = [...f.sourceTypes];
  if (f.scope) params.scope = f.scope;
  if (f.since) params.since = f.since;
  return params;
}

/** One line saying what the list shows: "“cache” · decision, fact · from chat · by use". */
export function describeFilters(f: Filters): string {
  const parts: string[] = [];
  if (f.query?.trim()) parts.push(`“${f.query.trim()}”`);
  if (f.kinds.length) parts.push(f.kinds.join(", "));
  if (f.statuses.length) parts.push(f.statuses.join(", "));
  if (f.sourceTypes.length) parts.push("from " + f.sourceTypes.map(sourceTypeLabel).join(" or "));
  if (f.scope) parts.push(f.scope);
  if (f.since) parts.push(`since ${f.since}`);
  if (f.sort !== "recent") parts.push(`by ${f.sort}`);
  return parts.join(" · ");
}

export function sourceTypeLabel(t: SourceType): string {
  return { file: "files", commit: "commits", chat: "chat", manual: "manual" }[t];
}

export type Provenance =
  | { type: "file"; path: string; fragment: string }
  | { type: "commit"; sha: string }
  | { type: "chat"; session: string }
  | { type: "manual"; source: string };

/** Where a memory came from, read from its `source` (`file:<path>#<anchor>`, `git:<sha>`,
 * `chat`, `chat:<session>`, `chat-tool`, anything else). */
export function provenance(source: string): Provenance {
  if (source.startsWith("file:")) {
    const rest = source.slice(5);
    const hash = rest.indexOf("#");
    return { type: "file", path: hash >= 0 ? rest.slice(0, hash) : rest, fragment: hash >= 0 ? rest.slice(hash + 1) : "" };
  }
  if (source.startsWith("git:")) return { type: "commit", sha: source.slice(4) };
  if (source === "chat" || source.startsWith("chat:")) return { type: "chat", session: source.slice(5) };
  if (source.startsWith("chat-")) return { type: "chat", session: "" }; // chat-tool: an agent's nous_remember
  return { type: "manual", source };
}

/** Short source for a row: `AGENTS.md`, `commit 1a2b3c4`, `chat`, `manual`. */
export function sourceLabel(source: string): string {
  const p = provenance(source);
  switch (p.type) {
    case "file":
      return p.path.split("/").pop() || p.path;
    case "commit":
      return `commit ${p.sha.slice(0, 7)}`;
    case "chat":
      return "chat"; // the session is in the record
    case "manual":
      return p.source || "manual";
  }
}

/** "just now", "5 min ago", "3 h ago", "2 d ago", "4 mo ago"; "never" for null. */
export function ago(iso: string | null, now: Date): string {
  if (!iso) return "never";
  const seconds = Math.max(0, (now.getTime() - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 60) return "just now";
  const minutes = seconds / 60;
  if (minutes < 60) return `${Math.floor(minutes)} min ago`;
  const hours = minutes / 60;
  if (hours < 24) return `${Math.floor(hours)} h ago`;
  const days = hours / 24;
  if (days < 60) return `${Math.floor(days)} d ago`;
  return `${Math.floor(days / 30)} mo ago`;
}

export function rowLabel(m: Pick<ListedMemory, "micro" | "content">): string {
  const text = (m.micro || m.content).replace(/\s+/g, " ").trim();
  return text.length > 100 ? text.slice(0, 99) + "…" : text;
}

/** How many characters a row holds at the default side-bar width (300 px: ~247 px of text beside
 * the icon, ~36 characters of the workbench font; a few kept for the scroll bar). */
export const ROW_CHARS = 33;
/** A row under a group (Project knowledge, Captured from chat): indented one level, 217 px of
 * label at the default width; at the widest characters measured there (~7.5 px: capitals,
 * digits, `w`) 29 fit. */
export const NESTED_ROW_CHARS = 29;

/** The row's label: the first words of the memory, cut to `max` characters (at a word boundary
 * when that keeps most of it); the rest is in the tooltip. */
export function rowTitle(m: Pick<ListedMemory, "micro" | "content">, max = 26): string {
  const text = rowLabel(m);
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return (space >= 0.7 * max ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, "") + "…";
}

/** A short source for the row: the file name cut to `max` characters, `commit`, `chat`, `manual`. */
export function shortSource(source: string, max = 10): string {
  const p = provenance(source);
  const label = p.type === "commit" ? "commit" : sourceLabel(source);
  if (max <= 0) return "";
  return label.length > max ? label.slice(0, max - 1) + "…" : label;
}

/** The row's description, beside the title: "recorded · AGENTS.md" (the kind is the icon); the
 * source cut to `sourceChars`. */
export function rowDescription(m: ListedMemory, sourceChars = 10): string {
  return [m.status + (m.pinned ? " · pinned" : ""), shortSource(m.source, sourceChars)].join(" · ");
}

/** Label and description of a row that fit `chars` together: the status whole, the source cut to
 * leave the title at least 12 characters, the title with what is left. */
export function rowParts(m: ListedMemory, chars = ROW_CHARS): { title: string; description: string } {
  const status = rowDescription(m, 0).length; // "recorded · ", the source left out
  const description = rowDescription(m, Math.max(4, Math.min(10, chars - 1 - 12 - status)));
  return { title: rowTitle(m, Math.max(12, chars - description.length - 1)), description };
}

/** "injected 2 h ago, referenced never" / "never injected". */
export function useText(m: ListedMemory, now: Date): string {
  return m.injected
    ? `injected ${m.injected}× (last ${ago(m.lastInjectedAt, now)}), referenced ${m.referenced}× (last ${ago(m.lastReferencedAt, now)})`
    : "never injected";
}

/** The row's tooltip as Markdown in three parts: a head (kind, status, id), the memory's text
 * (the caller appends it as plain text) and a foot (source as code, scope, tags, use). */
export function rowTooltip(m: ListedMemory, now: Date): { head: string; text: string; foot: string } {
  const head = `$(${kindIcon(m.kind, m.pinned)}) **${plain(m.kind)}** · ${plain(m.status)}${m.excluded ? " (kept out of context)" : ""} · \`${m.id.slice(0, 8)}\`${m.pinned ? " · pinned" : ""}\n\n`;
  const text = m.content.length > 600 ? m.content.slice(0, 599) + "…" : m.content;
  const foot = [
    `Source: ${sourceMarkdown(m.source)}`,
    `Scope: ${inlineCode(m.scope)}${m.tags.length ? ` · Tags: ${m.tags.map(inlineCode).join(", ")}` : ""}`,
    `Captured ${ago(m.createdAt, now)} · ${useText(m, now)}`,
  ].join("  \n");
  return { head, text, foot: `\n\n${foot}` };
}

/** A memory's source in Markdown: paths, anchors and other names as inline code. */
export function sourceMarkdown(source: string): string {
  const p = provenance(source);
  switch (p.type) {
    case "file":
      return `file ${inlineCode(p.path)}${p.fragment ? ` section ${inlineCode(p.fragment)}` : ""}`;
    case "commit":
      return `commit ${inlineCode(p.sha.slice(0, 12))}`;
    case "chat":
      return p.session ? `chat session ${inlineCode(p.session)}` : "chat";
    case "manual":
      return p.source ? inlineCode(p.source) : "manual";
  }
}

const KIND_ICONS: Record<string, string> = {
  decision: "law",
  fact: "info",
  procedure: "list-ordered",
  episode: "history",
  constraint: "warning",
  preference: "heart",
  correction: "wrench",
  convention: "symbol-ruler",
  note: "note",
};

/** A codicon id for the kind (`$(law)` for decisions…); `pinned` wins. */
export function kindIcon(kind: string, pinned = false): string {
  if (pinned) return "pinned";
  return KIND_ICONS[kind] ?? "circle-outline";
}

/** The tree item's `contextValue`: drives which actions its menus offer (`purge` never on a
 * decision, `pin` or `unpin`, keep/discard in the review queue). Space-separated words. */
export function contextValue(m: ListedMemory, review: boolean): string {
  const words = ["memory", m.pinned ? "pinned" : "unpinned"];
  if (m.kind !== "decision") words.push("purgeable");
  if (m.status !== "inactive") words.push("forgettable");
  if (m.nextStatuses.some((s) => s === "superseded" || s === "retired")) words.push("supersedable");
  if (m.kind === "decision" || m.kind === "procedure") words.push("outcome");
  if (m.sourceType === "file") words.push("file");
  if (review) words.push("review");
  return words.join(" ");
}

/** The memory list's two groups: what the project knows (harvested, committed, remembered on
 * purpose) and what chat captured on its own (turns, session notes; `captured` in `nous/list`). */
export type Group = "knowledge" | "captured";
export const GROUPS: readonly Group[] = ["knowledge", "captured"];

export const GROUP_LABELS: Readonly<Record<Group, { label: string; icon: string; tooltip: string }>> = {
  knowledge: {
    label: "Project knowledge",
    icon: "book",
    tooltip: "Harvested from the project's files and commits, or remembered on purpose",
  },
  captured: {
    label: "Captured from chat",
    icon: "comment-discussion",
    tooltip: "Chat turns and the session notes drawn from them, kept on their own (design §10)",
  },
};

export type Row =
  | { type: "memory"; memory: ListedMemory; group?: Group }
  | { type: "group"; group: Group; total: number; children: Row[] }
  | { type: "more"; offset: number; shown: number; total: number; group?: Group }
  | { type: "empty"; message: string };

/** The group a memory belongs in. */
export function groupOf(m: Pick<ListedMemory, "captured">): Group {
  return m.captured ? "captured" : "knowledge";
}

/** The group row's description: how many, and how many of them are shown. */
export function groupDescription(row: { total: number; children: Row[] }): string {
  const shown = row.children.filter((r) => r.type === "memory").length;
  return shown < row.total ? `${shown} of ${row.total}` : `${row.total}`;
}

/** The memory list as two groups, Project knowledge then Captured from chat, each with its own
 * pages (and its own "Load more"); a group with nothing in it is left out, and when both are
 * empty one row says why. */
export function groupRows(pages: Readonly<Record<Group, readonly ListResult[]>>, filtered: boolean): Row[] {
  const rows: Row[] = [];
  for (const group of GROUPS) {
    const loaded = pages[group];
    const total = loaded.at(-1)?.total ?? 0;
    if (total === 0) continue;
    const children = buildRows(loaded, filtered).map((r): Row =>
      r.type === "memory" || r.type === "more" ? { ...r, group } : r,
    );
    rows.push({ type: "group", group, total, children });
  }
  return rows.length ? rows : buildRows([], filtered);
}

/** The rows of the list: every memory of the pages loaded so far, then "Load more" while the
 * daemon has more, or one row saying why the list is empty. */
export function buildRows(pages: readonly ListResult[], filtered: boolean, review = false): Row[] {
  const rows: Row[] = [];
  const seen = new Set<string>();
  for (const page of pages) {
    for (const memory of page.items) {
      if (seen.has(memory.id)) continue; // a memory edited between pages moves up: keep it once
      seen.add(memory.id);
      rows.push({ type: "memory", memory });
    }
  }
  const last = pages.at(-1);
  if (last && last.nextOffset !== null) {
    rows.push({ type: "more", offset: last.nextOffset, shown: seen.size, total: last.total });
  }
  if (rows.length === 0) {
    const message = review
      ? "Nothing to review: what chat captures shows up here."
      : filtered
        ? "No memory matches these filters."
        : "No memories yet.";
    rows.push({ type: "empty", message });
  }
  return rows;
}

/** The 0-based line of the heading a harvested anchor points at (`rules-3` → `## Rules`), or 0. */
export function anchorLine(text: string, fragment: string): number {
  if (!fragment) return 0;
  let best = -1;
  let bestLength = 0;
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const heading = /^\s{0,3}#{1,6}\s+(.*)$/.exec(line);
    if (!heading) return;
    const slug = heading[1]!.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60);
    if (slug && fragment.includes(slug) && slug.length > bestLength) {
      best = i;
      bestLength = slug.length;
    }
  });
  return Math.max(best, 0);
}

function cell(s: string): string {
  return tableCell(s);
}

/** The full record as Markdown (rendered by the Markdown preview): fields, the memory's own text
 * rendered (its tables too), provenance (a link to the file and anchor, the commit, the chat
 * session), use and lifecycle history. Names the client or a repository chose (paths, anchors,
 * sessions, tags) are inline code. `root` is the workspace folder's URI (`file:///…`), for links
 * to harvested files. */
export function renderRecord(m: ListedMemory, now: Date, root?: string): string {
  const out: string[] = [];
  out.push(`# ${plain(m.kind)}: ${plain(rowTitle(m, 80))}`, "");
  out.push("| field | value |", "|---|---|");
  const rows: [string, string][] = [
    ["id", `\`${m.id}\``],
    ["status", plain(m.status) + (m.excluded ? " (kept out of context)" : "") + (m.nextStatuses.length ? ` → may become ${plain(m.nextStatuses.join(", "))}` : "")],
    ["scope", inlineCode(m.scope)],
    ["source", sourceMarkdown(m.source)],
    ["pinned", m.pinned ? "yes" : "no"],
    ["importance", m.importance.toFixed(2)],
    ["confidence", m.confidence.toFixed(2)],
    ["outcome", m.outcome ? plain(m.outcome) : "—"],
    ["tags", m.tags.length ? m.tags.map(inlineCode).join(", ") : "—"],
    ["captured", `${m.createdAt} (${ago(m.createdAt, now)})`],
    ["updated", `${m.updatedAt} (${ago(m.updatedAt, now)})`],
    ["confirmations", String(m.confirmations)],
  ];
  if (m.supersededBy) rows.push(["superseded by", `\`${m.supersededBy}\``]);
  for (const [k, v] of rows) out.push(`| ${k} | ${cell(v)} |`);
  // the memory's own Markdown, rendered; a heading of its own cannot pass for the record's
  out.push("", "## Text", "", demoteHeadings(m.content.trim()), "", "---", "");
  out.push("## Provenance", "");
  const p = provenance(m.source);
  switch (p.type) {
    case "file": {
      const base = root ? `${root.replace(/\/$/, "")}/` : "";
      const target = base + p.path.split("/").map(encodeURIComponent).join("/");
      out.push(`Harvested from the file [${inlineCode(p.path + (p.fragment ? "#" + p.fragment : ""))}](<${target}>), section ${inlineCode(p.fragment || "top")}.`);
      break;
    }
    case "commit":
      out.push(`Harvested from the commit ${inlineCode(p.sha)} (${inlineCode(`git show ${p.sha.slice(0, 12)}`)}).`);
      break;
    case "chat":
      out.push(p.session ? `Captured from the chat session ${inlineCode(p.session)}.` : "Captured from a chat (no session recorded).");
      out.push("", m.reviewed ? "Kept after review." : "Waiting for review (keep, edit or discard it in the Review view).");
      break;
    case "manual":
      out.push(`Written by hand (${inlineCode(p.source)}).`);
      break;
  }
  out.push("", "## Use", "");
  out.push(
    m.injected
      ? `Injected ${m.injected} time(s), referenced by the answer ${m.referenced} time(s); last injected ${ago(m.lastInjectedAt, now)}, last referenced ${ago(m.lastReferencedAt, now)}.`
      : "Never injected into a chat yet.",
  );
  if (m.usage?.length) {
    out.push("", "| when | session | referenced | overlap |", "|---|---|---|---:|");
    for (const u of m.usage) out.push(`| ${u.at} | ${cell(inlineCode(u.sessionId))} | ${u.referenced ? "yes" : "no"} | ${u.overlap.toFixed(2)} |`);
  }
  if (m.transitions?.length) {
    out.push("", "## Lifecycle", "", "| when | change | why |", "|---|---|---|");
    for (const t of m.transitions) out.push(`| ${t.at} | ${plain(t.fromStatus ?? "∅")} → ${plain(t.toStatus)} | ${cell(plain(t.reason))} |`);
  }
  out.push("");
  return out.join("\n");
}

/** ATX headings of a memory's text moved below the record's own `##` (`#` → `###`), outside code
 * fences. */
export function demoteHeadings(text: string): string {
  let fence: string | undefined;
  return text
    .split("\n")
    .map((line) => {
      const open = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
      if (open) {
        if (!fence) fence = open[1];
        else if (open[1]!.startsWith(fence[0]!) && open[1]!.length >= fence.length) fence = undefined;
        return line;
      }
      if (fence) return line;
      return line.replace(/^(\s{0,3})(#{1,4})(?=\s|$)/, (_, pad: string, hashes: string) => pad + "##" + hashes);
    })
    .join("\n");
}

/** Memory text in a one-line input box: line breaks shown as ` ⏎ ` and restored on the way back. */
export function toOneLine(text: string): string {
  return text.replace(/\r?\n/g, " ⏎ ");
}

export function fromOneLine(text: string): string {
  return text.replace(/ ?⏎ ?/g, "\n").trim();
}

/** A `command:` link that opens the memory in the browser. */
export function showMemoryLink(id: string): string {
  return `command:nous.showMemory?${encodeURIComponent(JSON.stringify([id]))}`;
}

/** Markdown with each `` `short id` `` of the given memories turned into a link that opens the
 * memory's record (the manifest's ids link into the browser). */
export function linkIds(markdown: string, ids: readonly string[]): string {
  const byShort = new Map(ids.map((id) => [id.slice(0, 8), id]));
  return markdown.replace(/(?<!\[)`([0-9a-f]{8})`(?!\])/g, (whole, short: string) => {
    const id = byShort.get(short);
    return id ? `[\`${short}\`](${showMemoryLink(id)})` : whole;
  });
}

/** Where short ids sit in a manifest document: [line, start column, short id] (for links). */
export function idSpans(text: string): [number, number, string][] {
  const out: [number, number, string][] = [];
  text.split("\n").forEach((line, n) => {
    for (const match of line.matchAll(/`([0-9a-f]{8})`/g)) out.push([n, match.index + 1, match[1]!]);
  });
  return out;
}
