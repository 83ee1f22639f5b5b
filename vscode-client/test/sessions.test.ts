import assert from "node:assert/strict";
import { test } from "node:test";
import { ago, forgottenMessage, MAX_SESSIONS, restoreSessions, sawSession, sessionPick, withoutSession } from "../src/sessions";

const MIN = 60_000;

test("a session seen again moves to the front and keeps its first prompt as its title", () => {
  let list = sawSession([], "a", "let's settle how shipping fees are computed", 1 * MIN);
  list = sawSession(list, "b", "where did we leave off?", 2 * MIN);
  list = sawSession(list, "a", "and the next step?", 3 * MIN);
  assert.deepEqual(list, [
    { id: "a", title: "let's settle how shipping fees are computed", requests: 2, last: 3 * MIN },
    { id: "b", title: "where did we leave off?", requests: 1, last: 2 * MIN },
  ]);
  assert.deepEqual(withoutSession(list, "a").map((s) => s.id), ["b"]);
});

test("the oldest sessions fall off beyond the limit; long prompts are cut", () => {
  let list = sawSession([], "s0", "x".repeat(300), 0);
  assert.equal(list[0]!.title.length, 80);
  assert.ok(list[0]!.title.endsWith("…"));
  for (let i = 1; i <= MAX_SESSIONS + 2; i++) list = sawSession(list, `s${i}`, `prompt ${i}`, i * MIN);
  assert.equal(list.length, MAX_SESSIONS);
  assert.equal(list[0]!.id, `s${MAX_SESSIONS + 2}`);
  assert.ok(!list.some((s) => s.id === "s0" || s.id === "s1" || s.id === "s2"));
  assert.equal(sawSession([], "e", "  \n ", 0)[0]!.title, "(empty prompt)");
});

test("a stored list is read back, dropping entries of the wrong shape and repeats", () => {
  const good = { id: "a", title: "t", requests: 1, last: 5 };
  assert.deepEqual(
    restoreSessions([good, { id: "b", title: "t" }, null, "x", { ...good, title: "again" }, { id: "", title: "t", requests: 1, last: 1 }]),
    [good],
  );
  assert.deepEqual(restoreSessions(undefined), []);
  assert.deepEqual(restoreSessions({ id: "a" }), []);
});

test("a session's row says how many requests and how long ago; the detail is its id", () => {
  const row = sessionPick({ id: "vscode-chat-x1", title: "settle shipping", requests: 3, last: 0 }, 5 * MIN);
  assert.deepEqual(row, { label: "settle shipping", description: "3 requests · 5 min ago", detail: "vscode-chat-x1" });
  assert.equal(sessionPick({ id: "i", title: "t", requests: 1, last: 0 }, 0).description, "1 request · just now");
  assert.deepEqual([0, 59 * MIN, 60 * MIN, 25 * 60 * MIN, 72 * 60 * MIN, -MIN].map((t) => ago(0, t)), [
    "just now",
    "59 min ago",
    "1 h ago",
    "1 day ago",
    "3 days ago",
    "just now",
  ]);
});

test("the message after forgetting counts what went, and says why nothing did", () => {
  assert.match(forgottenMessage(4, "settle shipping"), /^Nous: forgot 4 memories of the chat session “settle shipping”/);
  assert.match(forgottenMessage(1, "t"), /forgot 1 memory of/);
  assert.match(forgottenMessage(0, "t"), /nothing was stored.*capture off/);
});
