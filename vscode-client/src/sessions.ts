/** The `@nous` chat sessions this window saw, most recent first, for “Nous: Forget Chat
 * Session…”: each with the first prompt as its title, how many requests it had and when it was
 * last used. Pure: the caller keeps the list (in the workspace state) and passes the time. */

export interface SeenSession {
  id: string;
  /** The first prompt the participant saw in the session, cut to `TITLE_CHARS`. */
  title: string;
  requests: number;
  /** When the participant last saw the session, in ms since the epoch. */
  last: number;
}

export const MAX_SESSIONS = 10;
export const TITLE_CHARS = 80;

function titleOf(prompt: string): string {
  const flat = prompt.replace(/\s+/g, " ").trim();
  if (!flat) return "(empty prompt)";
  return flat.length > TITLE_CHARS ? flat.slice(0, TITLE_CHARS - 1) + "…" : flat;
}

/** The list after the participant saw `prompt` in session `id` at `at`: the session moves to the
 * front (keeping its first title), the oldest beyond `max` falls off. */
export function sawSession(
  list: readonly SeenSession[],
  id: string,
  prompt: string,
  at: number,
  max = MAX_SESSIONS,
): SeenSession[] {
  const known = list.find((s) => s.id === id);
  const seen: SeenSession = known
    ? { ...known, requests: known.requests + 1, last: at }
    : { id, title: titleOf(prompt), requests: 1, last: at };
  return [seen, ...list.filter((s) => s.id !== id)].slice(0, Math.max(0, max));
}

export function withoutSession(list: readonly SeenSession[], id: string): SeenSession[] {
  return list.filter((s) => s.id !== id);
}

/** A list read back from storage: entries of the wrong shape are dropped. */
export function restoreSessions(value: unknown, max = MAX_SESSIONS): SeenSession[] {
  if (!Array.isArray(value)) return [];
  const out: SeenSession[] = [];
  for (const entry of value as unknown[]) {
    if (typeof entry !== "object" || entry === null) continue;
    const { id, title, requests, last } = entry as Record<string, unknown>;
    if (typeof id !== "string" || !id || typeof title !== "string") continue;
    if (typeof requests !== "number" || typeof last !== "number" || !Number.isFinite(last)) continue;
    if (out.some((s) => s.id === id)) continue;
    out.push({ id, title, requests, last });
  }
  return out.slice(0, max);
}

/** 40 s → "just now", 5 min → "5 min ago", 3 h → "3 h ago", 2 days → "2 days ago". */
export function ago(then: number, now: number): string {
  const minutes = Math.floor(Math.max(0, now - then) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  return days === 1 ? "1 day ago" : `${days} days ago`;
}

/** The quick-pick row of a session. */
export function sessionPick(session: SeenSession, now: number): { label: string; description: string; detail: string } {
  const requests = session.requests === 1 ? "1 request" : `${session.requests} requests`;
  return { label: session.title, description: `${requests} · ${ago(session.last, now)}`, detail: session.id };
}

/** What the user is told after `nous/forgetSession`. */
export function forgottenMessage(forgotten: number, title: string): string {
  if (forgotten === 0) {
    return `Nous: nothing was stored for the chat session “${title}” (chat capture off, or already forgotten).`;
  }
  const what = forgotten === 1 ? "1 memory" : `${forgotten} memories`;
  return `Nous: forgot ${what} of the chat session “${title}” (its turns and session notes).`;
}
