/** Markdown pieces shared by the manifest, the record, the tooltips and the chat. Pure.
 * Client-chosen names (file names, source paths, languageIds, project names) are shown as inline
 * code, so a file named like an instruction reads as a name, never as prose (issue 28). */

/** `s` as one inline code span: a backtick fence longer than any run of backticks inside it
 * (CommonMark has no escape inside code spans), padded when it starts or ends with a backtick;
 * line breaks become spaces. Empty: an em dash. */
export function inlineCode(s: string): string {
  const flat = s.replace(/\s+/g, " ").trim();
  if (!flat) return "—";
  const longest = Math.max(0, ...[...flat.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") ? " " : "";
  return fence + pad + flat + pad + fence;
}

/** Markdown for one table cell: one line, cut to `max` characters, pipes escaped (also inside
 * code spans, as GFM wants). */
export function cell(s: string, max = Infinity): string {
  return shorten(s, max).replace(/\|/g, "\\|");
}

/** `s` on one line, cut to `max` characters with an ellipsis. */
export function shorten(s: string, max: number): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

/** Free text (a memory's text, a title) for a table cell: cut, then shown as typed. */
export function textCell(s: string, max = Infinity): string {
  return cell(plain(shorten(s, max)));
}

/** Plain text that Markdown must not interpret (a title, a prompt): its punctuation escaped. */
export function plain(s: string): string {
  return s.replace(/\s+/g, " ").trim().replace(/([\\`*_{}[\]()#+\-.!<>~])/g, "\\$1");
}

/** A fenced block around `text` that no line of it can close. */
export function fenced(text: string, info = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`{3,}/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${info}\n${text}\n${fence}`;
}

/** Decimal numbers in a daemon's free text rounded to at most `digits` decimals
 * (`0.7899200000000001` → `0.79`). */
export function roundNumbers(text: string, digits = 2): string {
  return text.replace(/-?\d+\.\d{3,}/g, (n) => String(Number(Number(n).toFixed(digits))));
}

/** 1234 → "1,234". */
export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}
