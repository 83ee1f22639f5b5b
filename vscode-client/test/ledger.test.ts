import assert from "node:assert/strict";
import { test } from "node:test";
import { countsText, Ledger } from "../src/ledger";
import type { ContextResult } from "../src/protocol";

function answer(sessionId: string, mode: string, tokens: number, capUsed: number): ContextResult {
  return {
    text: "x",
    tokens,
    budget: 6000,
    frame: "question",
    mode,
    intent: {},
    sections: [{ layer: "decisions", title: "Decisions", used: tokens, cap: 1500, items: [] }],
    dropped: [],
    session: { id: sessionId, used: capUsed, cap: 3000, remaining: 3000 - capUsed, recalls: 0, cut: false },
    fingerprint: {},
    refresh: null,
    notes: [],
  };
}

test("a session's figure is the sum of its manifests' tokens, turn context included", () => {
  const ledger = new Ledger();
  // three @nous answers (turn context: not counted by the session cap) and one recall
  ledger.add(answer("chat-a", "turn", 169, 0));
  ledger.add(answer("chat-a", "turn", 120, 0));
  ledger.add(answer("chat-a", "recall", 51, 51));
  const last = ledger.add(answer("chat-a", "turn", 100, 51));
  assert.equal(last.injected, 169 + 120 + 51 + 100);
  assert.deepEqual(last.counts, { turn: 3, recall: 1 });
  assert.equal(last.capUsed, 51);
  assert.equal(countsText(last.counts), "3 answers, 1 recall");
});

test("the current session is the one injected last; other sessions keep their own sums", () => {
  const ledger = new Ledger();
  ledger.add(answer("chat-a", "turn", 72, 0));
  ledger.add(answer("vscode-tools-1", "recall", 51, 51));
  assert.equal(ledger.current, "vscode-tools-1");
  assert.equal(ledger.tally()?.injected, 51);
  assert.equal(ledger.tally("chat-a")?.injected, 72);
  ledger.add(answer("chat-a", "turn", 10, 0));
  assert.equal(ledger.tally()?.injected, 82);
  assert.equal(ledger.tally("nobody"), undefined);
});

test("a tally handed out is a copy", () => {
  const ledger = new Ledger();
  const t = ledger.add(answer("s", "turn", 5, 0));
  t.injected = 999;
  t.counts["turn"] = 99;
  assert.equal(ledger.tally()?.injected, 5);
  assert.equal(ledger.tally()?.counts["turn"], 1);
  assert.equal(countsText({}), "nothing yet");
});
