/** The manifest of a context or recall answer as Markdown (what was injected, what was dropped
 * and why), and the source files it cites. Pure. */

import { countsText, type Tally } from "./ledger";
import { cell, count, fenced, inlineCode, plain, roundNumbers, textCell } from "./markdown";
import type { ContextResult, Dropped, Item, Limit } from "./protocol";

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

function sourceLabel(source: string): string {
  const file = fileSource(source);
  if (file) return inlineCode(file.path) + (file.fragment ? ` ${inlineCode("#" + file.fragment)}` : "");
  if (source.startsWith("git:")) return "commit " + inlineCode(source.slice(4, 11));
  if (source === "chat" || source.startsWith("chat:") || source.startsWith("chat-")) return "chat";
  return source ? inlineCode(source) : "—";
}

/** What the manifest knows beyond the answer: the dropped memories' titles (from `nous/list`),
 * this chat session's tally when the answer was injected, and whether it was only a preview. */
export interface ManifestExtras {
  titles?: ReadonlyMap<string, string>;
  tally?: Tally;
  preview?: boolean;
  /** Memory id → whether the model's reply referenced it (`nous/feedback`), for the judged items
   * of this answer: a `reply` column (referenced, unused, — not judged yet). */
  judged?: ReadonlyMap<string, boolean>;
}

/** One line on a limit that refused (or cut) the request: its name, the count, the message. */
export function limitText(limit: Limit): string {
  return `${limit.message.trim() || "a limit was reached"} (${inlineCode(limit.name)}: ${count(limit.used)} of ${count(limit.max)})`;
}

/** What a refused request tells the user and the model: "Nous refused: … (`name`: 2 of 2)". */
export function refusal(limit: Limit): string {
  return `Nous refused this request: ${limitText(limit)}.`;
}

/** The whole manifest as a Markdown document (rendered by the Markdown preview). `title` names
 * the request (the user's input). */
export function renderManifest(result: ContextResult, title: string, extras: ManifestExtras = {}): string {
  const out: string[] = [];
  out.push(`# Nous manifest: ${plain(title) || "(no input)"}`, "");
  const what =
    `**${result.mode}** context, frame **${plain(result.frame)}**` +
    (typeof result.intent.task === "string" ? `, task **${plain(result.intent.task)}**` : "");
  out.push(extras.preview ? `${what} — a preview: shown, not injected.` : `${what}.`, "");
  if (result.limit) out.push(`> **Refused:** ${limitText(result.limit)}`, "");
  const session = result.session;
  const tally = extras.tally;
  out.push("| | tokens |", "|---|---|");
  out.push(
    `| ${extras.preview ? "this answer would inject" : "this answer injected"} | ${count(result.tokens)} of its ${count(result.budget)}-token budget |`,
  );
  if (tally && !extras.preview) {
    out.push(`| this chat session, every injection | ${count(tally.injected)} (${countsText(tally.counts)}) |`);
  }
  out.push(
    `| session cap (startup, recalls, expands) | ${count(session.used)} of ${count(session.cap)} used, ${count(session.remaining)} left; ${session.recalls} ${session.recalls === 1 ? "recall" : "recalls"} |`,
  );
  out.push("", `Session ${inlineCode(session.id ?? "—")}. An answer's turn context has its own budget; the session cap limits startup context, recalls and expands.`, "");
  if (session.cut) out.push("**Cut to fit the session cap.**", "");
  if (result.refresh) out.push(`Refresh: ${plain(result.refresh)}.`, "");
  for (const note of result.notes) out.push(`Note: ${plain(roundNumbers(note))}`, "");

  const included = items(result);
  out.push(`## Injected (${included.length})`, "");
  if (included.length === 0) {
    out.push("Nothing from memory was injected.", "");
  } else {
    const judged = extras.judged && extras.judged.size > 0 ? extras.judged : undefined;
    if (judged) out.push(judgedText(included, judged), "");
    out.push(
      `| layer | kind | id | tokens | score |${judged ? " reply |" : ""} source | text |`,
      `|---|---|---|---:|---:|${judged ? "---|" : ""}---|---|`,
    );
    for (const item of included) {
      const verdict = judged ? ` ${usedText(judged.get(item.id))} |` : "";
      out.push(
        `| ${cell(item.layer)} | ${cell(item.kind)} | \`${shortId(item.id)}\` | ${item.tokens} | ${item.score.toFixed(2)} |${verdict} ${cell(sourceLabel(item.source))} | ${textCell(item.text, 160)} |`,
      );
    }
    out.push("");
  }
  out.push("### Layers", "", "| layer | used | cap |", "|---|---:|---:|");
  for (const s of result.sections) out.push(`| ${cell(s.title)} | ${count(s.used)} | ${count(s.cap)} |`);
  out.push("");

  out.push(`## Dropped (${result.dropped.length})`, "");
  if (result.dropped.length === 0) {
    out.push("Nothing was dropped.", "");
  } else {
    out.push("| kind | memory | id | score | why |", "|---|---|---|---:|---|");
    for (const d of result.dropped) out.push(droppedRow(d, extras.titles?.get(d.id)));
    out.push("");
  }
  out.push("## Text as injected", "", fenced(result.text, "markdown"), "");
  return out.join("\n");
}

function usedText(referenced: boolean | undefined): string {
  return referenced === undefined ? "—" : referenced ? "**referenced**" : "unused";
}

/** "The model's reply referenced **1** of the 3 injected items (judged by `nous/feedback`)." */
export function judgedText(included: Item[], judged: ReadonlyMap<string, boolean>): string {
  const verdicts = included.map((i) => judged.get(i.id)).filter((v): v is boolean => v !== undefined);
  const referenced = verdicts.filter(Boolean).length;
  const by = `by ${inlineCode("nous/feedback")}`;
  if (verdicts.length === included.length) {
    return `The model's reply referenced **${referenced}** of the ${included.length} injected ${included.length === 1 ? "item" : "items"} (judged ${by}).`;
  }
  return `The model's reply referenced **${referenced}** of the ${verdicts.length} injected items judged so far (${included.length} injected; ${by}).`;
}

function droppedRow(d: Dropped, title: string | undefined): string {
  const detail = roundNumbers(d.detail);
  const why = reasonText(d.reason) + (detail ? ` (${textCell(detail, 80)})` : "");
  const name = title ? textCell(title, 80) : "—";
  return `| ${cell(d.kind)} | ${name} | \`${shortId(d.id)}\` | ${d.score.toFixed(2)} | ${why} |`;
}

/** One line for the chat: "Nous: 3 memories (212 tokens); 2 dropped; this chat 480 tokens". */
export function summaryLine(result: ContextResult, tally?: Tally): string {
  const n = items(result).length;
  const dropped = result.dropped.length;
  const parts = [`Nous: ${n} ${n === 1 ? "memory" : "memories"} (${result.tokens} tokens)`];
  if (dropped > 0) parts.push(`${dropped} dropped`);
  if (result.session.cut) parts.push("cut to fit the session cap");
  if (tally) parts.push(`this chat session ${count(tally.injected)} tokens in all`);
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
