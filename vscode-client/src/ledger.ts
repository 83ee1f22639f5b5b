/** What this window injected into each chat session, counted from the answers themselves: every
 * `@nous` answer (turn context), tool call (`nous_context`, `nous_recall`), `/recall` and Recall…
 * adds the tokens its manifest shows. The status bar, the manifest, the chat and the tool results
 * all read their session figure from here, so they agree by construction. Previews (Show Context
 * for…, `@nous /context`) inject nothing and are not counted. Pure (no `vscode` import).
 *
 * Why not the daemon's `session.used`: that figure is what the session cap governs (startup,
 * recalls, expands; design §3) and leaves out turn context, so after an `@nous` answer it stayed 0;
 * and `nous/budget` notifications arrive for whichever session spoke last (a preview, another
 * chat's tool call), so the bar jumped between sessions. Both are kept here, side by side. */

import type { ContextResult, LayerUse } from "./protocol";

export interface Tally {
  sessionId: string;
  /** Tokens injected into this session by every path (what the manifests add up to). */
  injected: number;
  /** How many injections, by mode: `turn` (an `@nous` answer), `recall`, `startup`. */
  counts: Record<string, number>;
  /** The daemon's count against the session cap after the last injection (startup, recalls and
   * expands count; turn context has its own budget per answer). */
  capUsed: number;
  cap: number;
  recalls: number;
  /** Per-layer use of the last injection. */
  layers: LayerUse[];
  /** The last injection was refused or cut by a limit. */
  limited: boolean;
}

export const MAX_SESSIONS = 50;

export class Ledger {
  private readonly tallies = new Map<string, Tally>();
  /** The session of the most recent injection: the one the status bar shows. */
  current: string | undefined;

  /** Count an injected answer; returns its session's tally after it (a copy). */
  add(result: ContextResult): Tally {
    const sessionId = result.session.id ?? "(no session)";
    const before = this.tallies.get(sessionId);
    const mode = result.mode || "turn";
    const tally: Tally = {
      sessionId,
      injected: (before?.injected ?? 0) + Math.max(0, result.tokens),
      counts: { ...before?.counts, [mode]: (before?.counts[mode] ?? 0) + 1 },
      capUsed: result.session.used,
      cap: result.session.cap,
      recalls: result.session.recalls,
      layers: result.sections.map((s) => ({ layer: s.layer, used: s.used, cap: s.cap })),
      limited: Boolean(result.limit) || result.session.cut,
    };
    this.tallies.delete(sessionId);
    this.tallies.set(sessionId, tally);
    while (this.tallies.size > MAX_SESSIONS) this.tallies.delete(this.tallies.keys().next().value as string);
    this.current = sessionId;
    return copy(tally);
  }

  tally(sessionId?: string | null): Tally | undefined {
    const id = sessionId ?? this.current;
    const found = id === undefined ? undefined : this.tallies.get(id);
    return found ? copy(found) : undefined;
  }
}

function copy(t: Tally): Tally {
  return { ...t, counts: { ...t.counts }, layers: t.layers.map((l) => ({ ...l })) };
}

const MODE_NAMES: Record<string, [string, string]> = {
  turn: ["answer", "answers"],
  recall: ["recall", "recalls"],
  startup: ["startup context", "startup contexts"],
  expand: ["expand", "expands"],
};

/** "3 answers, 1 recall". */
export function countsText(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([mode, n]) => {
      const [one, many] = MODE_NAMES[mode] ?? [mode, mode];
      return `${n} ${n === 1 ? one : many}`;
    });
  return parts.join(", ") || "nothing yet";
}
