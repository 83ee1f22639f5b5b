/** The manifest of a context or recall answer as Markdown (what was injected, what was dropped
 * and why), and the source files it cites. Pure. */

import type { ContextResult, Dropped, Item } from "./protocol";

const REASONS: Record<string, string> = {
  budget: "did not fit the budget",
  "duplicate-of-conversation": "already in the conversation",
  duplicate: "duplicate of a chosen memory",
  "low-score": "below the relevance threshold",
  scope: "out of scope for this project",
  "profile-excluded": "excluded by the profile",
  secret: "looked like a secret",
  "session-cap": "session cap reached",
  "excluded-kind": "kind excluded",
};

export function reasonText(reason: string): string {
  return REASONS[reason] ?? reason;
}

export interface FileSource {
  /** Workspace-relative path, e.g. `docs/adr/0001-sqlite.md`. */
  path: string;
  /** Anchor inside the file, e.g. `adr-1`, or "" when none. */
  fragment: string;
}

/** `file:docs/adr/0001-x.md#adr-1` → {path, fragment}; anything else (git:, manual) → undefined. */
export function fileSource(source: string): FileSource | undefined {
  if (!source.startsWith("file:")) return undefined;
  const rest = source.slice("file:".length);
  const hash = rest.indexOf("#");
  const path = hash >= 0 ? rest.slice(0, hash) : rest;
  if (path === "") return undefined;
  return { path, fragment: hash >= 0 ? rest.slice(hash + 1) : "" };
}

export function items(result: Pick<ContextResult, "sections">): Item[] {
  return result.sections.flatMap((s) => s.items);
}

/** The distinct source files of the included memories, in manifest order. */
export function sourceFiles(result: Pick<ContextResult, "sections">): string[] {
  const seen = new Set<string>();
  for (const item of items(result)) {
    const file = fileSource(item.source);
    if (file) seen.add(file.path);
  }
  return [...seen];
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}

function cell(s: string, max = 90): string {
  const flat = s.replace(/\s+/g, " ").replace(/\|/g, "\\|").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

function sourceLabel(source: string): string {
  const file = fileSource(source);
  if (file) return "`" + file.path + "`";
  if (source.startsWith("git:")) return "git " + source.slice(4, 11);
  return source || "—";
}

/** The whole manifest as a Markdown document. `title` names the request (the user's input). */
export function renderManifest(result: ContextResult, title: string): string {
  const out: string[] = [];
  out.push(`# Nous manifest: ${cell(title, 120) || "(no input)"}`, "");
  const session = result.session;
  out.push(
    `- **${result.mode}** context, frame **${result.frame}**` +
      (typeof result.intent.task === "string" ? `, task **${result.intent.task}**` : ""),
    `- ${result.tokens} of ${result.budget} tokens used by this answer`,
    `- session \`${session.id ?? "—"}\`: ${session.used} / ${session.cap} tokens, ${session.remaining} remaining, ${session.recalls} recall(s)`,
  );
  if (session.cut) out.push("- **cut to fit the session cap**");
  if (result.refresh) out.push(`- refresh: ${result.refresh}`);
  for (const note of result.notes) out.push(`- note: ${note}`);
  out.push("");

  const included = items(result);
  out.push(`## Injected (${included.length})`, "");
  if (included.length === 0) {
    out.push("Nothing from memory was injected.", "");
  } else {
    out.push("| layer | kind | id | tokens | score | source | text |", "|---|---|---|---:|---:|---|---|");
    for (const item of included) {
      out.push(
        `| ${item.layer} | ${item.kind} | \`${shortId(item.id)}\` | ${item.tokens} | ${item.score.toFixed(2)} | ${sourceLabel(item.source)} | ${cell(item.text)} |`,
      );
    }
    out.push("");
  }
  out.push("### Layers", "", "| layer | used | cap |", "|---|---:|---:|");
  for (const s of result.sections) out.push(`| ${s.title} | ${s.used} | ${s.cap} |`);
  out.push("");

  out.push(`## Dropped (${result.dropped.length})`, "");
  if (result.dropped.length === 0) {
    out.push("Nothing was dropped.", "");
  } else {
    out.push("| kind | id | score | why |", "|---|---|---:|---|");
    for (const d of result.dropped) out.push(droppedRow(d));
    out.push("");
  }
  out.push("## Text as injected", "", "````markdown", result.text, "````", "");
  return out.join("\n");
}

function droppedRow(d: Dropped): string {
  const why = reasonText(d.reason) + (d.detail ? ` (${cell(d.detail, 60)})` : "");
  return `| ${d.kind} | \`${shortId(d.id)}\` | ${d.score.toFixed(2)} | ${why} |`;
}

/** One line for the chat: "Nous injected 3 memories (212 tokens); 2 dropped." */
export function summaryLine(result: ContextResult): string {
  const n = items(result).length;
  const dropped = result.dropped.length;
  const parts = [`Nous: ${n} ${n === 1 ? "memory" : "memories"} (${result.tokens} tokens)`];
  if (dropped > 0) parts.push(`${dropped} dropped`);
  if (result.session.cut) parts.push("cut to fit the session cap");
  return parts.join("; ");
}

/** `/remember decision: use X` → {kind: "decision", content: "use X"}; no known kind → note. */
export const KINDS = [
  "decision",
  "fact",
  "procedure",
  "episode",
  "constraint",
  "preference",
  "correction",
  "convention",
  "note",
] as const;

export function parseRemember(text: string): { kind: string; content: string } {
  const match = /^\s*([a-z]+)\s*:\s*([\s\S]+)$/i.exec(text);
  if (match) {
    const kind = match[1]!.toLowerCase();
    if ((KINDS as readonly string[]).includes(kind)) return { kind, content: match[2]!.trim() };
  }
  return { kind: "note", content: text.trim() };
}
