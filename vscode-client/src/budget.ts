/** Status-bar text, tooltip and warning level from the ledger's tally of the current chat session
 * (`ledger.ts`) and the team state of the last `nous/budget` notification. Pure. */

import { countsText, type Tally } from "./ledger";
import { count, inlineCode } from "./markdown";
import type { MetricName, StatsResult, TeamState } from "./protocol";

/** 850 → "850", 1234 → "1.2k", 3000 → "3k", 12500 → "12.5k", 1_250_000 → "1.3M". */
export function compact(n: number): string {
  const value = Math.max(0, Math.round(n));
  if (value < 1000) return String(value);
  if (value < 1_000_000) return trimZero((value / 1000).toFixed(1)) + "k";
  return trimZero((value / 1_000_000).toFixed(1)) + "M";
}

function trimZero(s: string): string {
  return s.endsWith(".0") ? s.slice(0, -2) : s;
}

export type Level = "ok" | "warning" | "error";

/** At 80 % of the session cap the item turns to the warning look; at the cap, the error look. */
export const WARNING_RATIO = 0.8;

export function level(used: number, cap: number): Level {
  if (cap <= 0) return "ok";
  const ratio = used / cap;
  if (ratio >= 1) return "error";
  if (ratio >= WARNING_RATIO) return "warning";
  return "ok";
}

/** `Nous 1.2k/3k` (tokens injected into the chat session / the session cap), with
 * `$(cloud-offline)` when the team store did not answer (local only). */
export function statusText(budget: { used: number; cap: number; team?: TeamState }): string {
  const text = `Nous ${compact(budget.used)}/${compact(budget.cap)}`;
  return teamUnreachable(budget.team) ? `${text} $(cloud-offline)` : text;
}

function teamUnreachable(team: TeamState | undefined): boolean {
  return team === "slow" || team === "down";
}

/** The tooltip's line about the team store; none when there is none. */
export function teamLine(team: TeamState | undefined): string | undefined {
  if (team === undefined || team === "off") return undefined;
  if (teamUnreachable(team)) {
    return `$(cloud-offline) Team store: **${team}** — answers use this machine's memories only; team writes wait and are sent when it is back.`;
  }
  return `$(cloud) Team store: **${team}** — the team's shared memories join every answer (\`nous.teamStore\`).`;
}

export interface Workspace {
  project?: string;
  language?: string;
  task?: string;
  /** Whether the daemon keeps chat turns and session notes (`nous/status`); unknown: not said. */
  capture?: boolean;
}

/** The tooltip's line about chat capture (the `nous.capture` setting). */
export function captureLine(capture: boolean): string {
  return capture
    ? "Chat capture: **on** — `@nous` turns and the session notes drawn from them are kept, on this machine only (`nous.capture`)."
    : "Chat capture: **off** — nothing from the chat is stored (`nous.capture`).";
}

function metric(stats: StatsResult, name: MetricName): number | null {
  return stats.metrics.find((m) => m.name === name)?.value ?? null;
}

function percent(share: number): string {
  return `${Math.round(100 * share)} %`;
}

/** The chat session's seed metrics from `nous/stats`: "Referenced 3 of 5 (60 %) · utilization
 * 42 % · 0.25 refreshes per turn"; a figure with nothing to measure yet says so. */
export function statsLine(stats: StatsResult): string {
  const parts = [
    stats.judged > 0
      ? `Referenced ${stats.referenced} of ${stats.judged} (${percent(stats.referenced / stats.judged)})`
      : "Referenced: no reply judged yet",
  ];
  const utilization = metric(stats, "budgetUtilization");
  parts.push(utilization === null ? "utilization unknown" : `utilization ${percent(utilization)}`);
  const refresh = metric(stats, "refreshRate");
  if (refresh !== null) parts.push(`${Number(refresh.toFixed(2))} refreshes per turn`);
  return parts.join(" · ");
}

/** Markdown tooltip: what the chat session was given in all, how much of it the model's replies
 * referenced (`stats`: the session's `nous/stats`, once known), the session cap's own count, one
 * row per layer of the last injection, then project, language and task. `title`: the chat's first
 * prompt, when known. */
export function tooltipMarkdown(
  tally: Tally | undefined,
  ws: Workspace,
  team?: TeamState,
  title?: string,
  stats?: StatsResult,
): string {
  const lines: string[] = [];
  if (!tally) {
    lines.push("**Nous** — nothing injected yet in this window", "");
  } else {
    lines.push(
      `**Nous** — ${count(tally.injected)} tokens injected into this chat session (${countsText(tally.counts)})`,
      "",
    );
    if (title) lines.push(`Chat: “${escapeCell(title)}” · session ${inlineCode(tally.sessionId)}`, "");
    else lines.push(`Session ${inlineCode(tally.sessionId)}`, "");
    if (stats && stats.sessionId === tally.sessionId) lines.push(statsLine(stats), "");
    const pct = tally.cap > 0 ? Math.round((100 * tally.capUsed) / tally.cap) : 0;
    lines.push(
      `Session cap (startup context, recalls, expands): ${count(tally.capUsed)} / ${count(tally.cap)} tokens (${pct}%); each answer's turn context has its own budget.`,
      "",
    );
    const warn = level(tally.capUsed, tally.cap);
    if (warn !== "ok") {
      lines.push(
        warn === "error"
          ? "$(error) The session cap is reached: further context is cut to fit."
          : "$(warning) Near the session cap: later recalls will be cut to fit.",
        "",
      );
    }
    if (tally.layers.length > 0) {
      lines.push("| layer (last answer) | used | cap |", "|---|---:|---:|");
      let borrowed = false;
      for (const layer of tally.layers) {
        const over = layer.used > layer.cap;
        borrowed ||= over;
        lines.push(`| ${escapeCell(layer.layer)} | ${layer.used}${over ? " ↑" : ""} | ${layer.cap} |`);
      }
      lines.push("");
      // The allocator's second pass gives budget other layers left unused to the deferred items.
      if (borrowed) lines.push("↑ over its own cap with budget other layers left unused", "");
    }
  }
  lines.push(
    `Project: ${ws.project ? inlineCode(ws.project) : "—"} · Language: ${ws.language ? inlineCode(ws.language) : "—"} · Task: **${escapeCell(ws.task || "—")}**`,
    "",
  );
  if (ws.capture !== undefined) lines.push(captureLine(ws.capture), "");
  const teamText = teamLine(team);
  if (teamText) lines.push(teamText, "");
  lines.push("Click to show the last manifest (what was injected, what was dropped and why).");
  return lines.join("\n");
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}
