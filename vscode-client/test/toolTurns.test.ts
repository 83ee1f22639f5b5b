import assert from "node:assert/strict";
import { test } from "node:test";
import { AGENT_SESSION_PREFIX, tokenSession, toolTurn } from "../src/toolTurns";

/** A revived `vscode.Uri` prints as its URI; this stands for one (the token VS Code 1.139 hands a
 * tool is `{ sessionResource: Uri, workingDirectory?: Uri }`). */
class FakeUri {
  constructor(private readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

test("a tool call's token names its chat session: the same chat gives the same id, another chat another", () => {
  const a = tokenSession({ sessionResource: new FakeUri("vscode-chat-session://local/aaa"), workingDirectory: new FakeUri("file:///ws") });
  const again = tokenSession({ sessionResource: new FakeUri("vscode-chat-session://local/aaa") });
  const b = tokenSession({ sessionResource: new FakeUri("vscode-chat-session://local/bbb") });
  assert.ok(a?.startsWith(AGENT_SESSION_PREFIX));
  assert.equal(a, again);
  assert.notEqual(a, b);
});

test("the older token shape ({ sessionId }) and a plain-string resource name a session too", () => {
  const old = tokenSession({ sessionId: "a1b2-c3" });
  assert.ok(old?.startsWith(AGENT_SESSION_PREFIX));
  assert.equal(tokenSession({ sessionResource: "vscode-chat-session://local/x" }), tokenSession({ sessionResource: new FakeUri("vscode-chat-session://local/x") }));
  assert.notEqual(old, tokenSession({ sessionId: "other" }));
});

test("a session id from a token is short and holds no '#' (the daemon's rule), whatever the URI holds", () => {
  const id = tokenSession({ sessionResource: new FakeUri(`vscode-chat-session://local/${"x".repeat(500)}#frag`) });
  assert.ok(id && id.length <= 200 && !id.includes("#"), id);
});

test("no token, or a token that names no session, gives no session (the caller falls back to the window's)", () => {
  assert.equal(tokenSession(undefined), undefined);
  assert.equal(tokenSession(null), undefined);
  assert.equal(tokenSession("token"), undefined);
  assert.equal(tokenSession({}), undefined);
  assert.equal(tokenSession({ sessionId: "" }), undefined);
  assert.equal(tokenSession({ sessionResource: {} }), undefined);
});

test("nous_context reports its task and nous_recall its query as a user turn of the session, naming the tool", () => {
  assert.deepEqual(toolTurn("nous_context", { task: "  Add retries to the uploader; next step: the backoff tests " }, "s1"), {
    sessionId: "s1",
    role: "user",
    text: "Add retries to the uploader; next step: the backoff tests",
    tool: "nous_context",
  });
  assert.deepEqual(toolTurn("nous_recall", { query: "how do we deploy?", kinds: ["procedure"] }, "s2"), {
    sessionId: "s2",
    role: "user",
    text: "how do we deploy?",
    tool: "nous_recall",
  });
});

test("an empty input, another tool's input or nous_remember's content is no turn", () => {
  assert.equal(toolTurn("nous_context", {}, "s"), undefined);
  assert.equal(toolTurn("nous_context", { task: "   " }, "s"), undefined);
  assert.equal(toolTurn("nous_recall", { query: 42 }, "s"), undefined);
  assert.equal(toolTurn("nous_recall", undefined, "s"), undefined);
  // stored as its own memory already: not kept a second time as a turn
  assert.equal(toolTurn("nous_remember", { kind: "decision", content: "We use SQLite." }, "s"), undefined);
  assert.equal(toolTurn("other_tool", { task: "x" }, "s"), undefined);
  assert.equal(toolTurn("toString", { task: "x" }, "s"), undefined);
});
