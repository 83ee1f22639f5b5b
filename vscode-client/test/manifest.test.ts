import assert from "node:assert/strict";
import { test } from "node:test";
import { fileSource, parseRemember, reasonText, renderManifest, sourceFiles, summaryLine } from "../src/manifest";
import type { ContextResult } from "../src/protocol";

function result(): ContextResult {
  return {
    text: "## Relevant Past Decisions\n- Use SQLite with WAL. [1.00]",
    tokens: 212,
    budget: 6000,
    frame: "question",
    mode: "turn",
    intent: { task: "coding" },
    sections: [
      {
        layer: "decisions",
        title: "Relevant Past Decisions",
        used: 30,
        cap: 1500,
        items: [
          { id: "501618aaaaaaaaaa", kind: "decision", scope: "project:shop", layer: "decisions", detail: "summary", tokens: 22, score: 0.71, terms: {}, text: "Use SQLite with WAL | not Postgres", source: "file:docs/adr/0001-sqlite.md#adr-1" },
          { id: "b277dcbbbbbbbbbb", kind: "constraint", scope: "project:shop", layer: "decisions", detail: "micro", tokens: 8, score: 0.6, terms: {}, text: "Never edit migrations", source: "file:AGENTS.md#constraints-7" },
          { id: "6ccb6bcccccccccc", kind: "episode", scope: "project:shop", layer: "decisions", detail: "micro", tokens: 8, score: 0.5, terms: {}, text: "Fixed the flaky test", source: "git:cb29775fa4068" },
          { id: "dd89f7dddddddddd", kind: "decision", scope: "project:shop", layer: "decisions", detail: "micro", tokens: 8, score: 0.5, terms: {}, text: "Another ADR-1 rule", source: "file:docs/adr/0001-sqlite.md#adr-1" },
        ],
      },
    ],
    dropped: [
      { id: "ffff000011112222", kind: "fact", reason: "duplicate-of-conversation", score: 0.8, detail: "" },
      { id: "eeee000011112222", kind: "note", reason: "budget", score: 0.4, detail: "needs 90 tokens" },
    ],
    session: { id: "vscode-chat-1", used: 476, cap: 3000, remaining: 2524, recalls: 1, cut: true },
    fingerprint: {},
    refresh: null,
    notes: [],
  };
}

test("file sources become paths with anchors; git and manual sources are not files", () => {
  assert.deepEqual(fileSource("file:docs/adr/0001-x.md#adr-1"), { path: "docs/adr/0001-x.md", fragment: "adr-1" });
  assert.deepEqual(fileSource("file:AGENTS.md"), { path: "AGENTS.md", fragment: "" });
  assert.equal(fileSource("git:abc"), undefined);
  assert.equal(fileSource("manual"), undefined);
});

test("the references are the distinct source files, in manifest order", () => {
  assert.deepEqual(sourceFiles(result()), ["docs/adr/0001-sqlite.md", "AGENTS.md"]);
});

test("the manifest shows every injected item, every drop with its reason, and the session", () => {
  const md = renderManifest(result(), "how do we store data?");
  assert.match(md, /^# Nous manifest: how do we store data\?/);
  assert.match(md, /frame \*\*question\*\*, task \*\*coding\*\*/);
  assert.match(md, /476 \/ 3000 tokens, 2524 remaining/);
  assert.match(md, /cut to fit the session cap/);
  assert.match(md, /## Injected \(4\)/);
  assert.match(md, /\| decisions \| decision \| `501618aa` \| 22 \| 0\.71 \| `docs\/adr\/0001-sqlite\.md` \| Use SQLite with WAL \\\| not Postgres \|/);
  assert.match(md, /git cb29775/);
  assert.match(md, /## Dropped \(2\)/);
  assert.match(md, /`ffff0000` \| 0\.80 \| already in the conversation/);
  assert.match(md, /did not fit the budget \(needs 90 tokens\)/);
  assert.match(md, /Use SQLite with WAL\. \[1\.00\]/);
});

test("an empty answer says nothing was injected or dropped", () => {
  const empty = { ...result(), sections: [], dropped: [], text: "" };
  const md = renderManifest(empty, "");
  assert.match(md, /Nothing from memory was injected/);
  assert.match(md, /Nothing was dropped/);
  assert.equal(reasonText("something-new"), "something-new");
});

test("summary line counts memories, drops and a cut", () => {
  assert.equal(summaryLine(result()), "Nous: 4 memories (212 tokens); 2 dropped; cut to fit the session cap");
});

test("/remember takes an optional known kind prefix", () => {
  assert.deepEqual(parseRemember("decision: use SQLite"), { kind: "decision", content: "use SQLite" });
  assert.deepEqual(parseRemember("Note: the API is at v2"), { kind: "note", content: "the API is at v2" });
  assert.deepEqual(parseRemember("http: is a scheme"), { kind: "note", content: "http: is a scheme" });
});
