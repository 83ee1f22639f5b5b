// End to end in real VS Code: code-server (from npm) in headless Chromium (Debian), driven by
// playwright-core. Installs the platform Nous VSIX (scripts/package: it brings its server as
// wheels) and the test-only fake-model extension into a fresh code-server whose Python lacks Nous
// and whose pip reaches no package index, then checks: the VSIX installs its server into a private
// venv on first start (progress notification) and the daemon starts from it; `@nous …` typed in the chat input reaches the
// fake model with the injected context; the fake model's nous_recall tool call (the participant's
// tool loop) and `vscode.lm.invokeTool` reach the daemon; the status bar shows the budget the
// daemon reported; a decision and a next step settled in one chat session open the next one's
// #nousContext as session notes, and “Nous: Forget Chat Session…” removes them; an agent-mode tool
// call (another participant passing its chat's invocation token, or none) is kept as a turn of
// that chat's session, and Show Context for… keeps nothing; the memory browser lists chat captures
// apart from project knowledge; a reply that paraphrases one injected memory is counted
// referenced by the manifest, the status bar's tooltip and `nous stats` (issue 27's loop); after
// the run the store holds no query-only turn outside its session (recalled from a new session
// with `nous recall`) and no test-model text. Screenshots go to $NOUS_E2E_OUT (default e2e/out).
//
// Needs: code-server on PATH, NOUS_VSIX (the platform VSIX), NOUS_PYTHON (a Python with nous
// installed, only to seed the test's memories from the command line), NOUS_E2E_BARE_PYTHON (a
// Python ≥ 3.11 without Nous, default /usr/bin/python3), NOUS_E2E_CHROMIUM (default
// /usr/bin/chromium). scripts/test-vscode sets them.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = process.env.NOUS_E2E_OUT || join(HERE, "out");
const VERSION = JSON.parse(readFileSync(join(HERE, "..", "package.json"), "utf8")).version;
const VSIX = process.env.NOUS_VSIX || join(HERE, "..", "..", "dist", `nous-linux-x64-${VERSION}.vsix`);
const FAKE_VSIX = join(OUT, "fake-model.vsix");
const PYTHON = process.env.NOUS_PYTHON || join(HERE, "..", "..", ".venv", "bin", "python");
const CHROMIUM = process.env.NOUS_E2E_CHROMIUM || "/usr/bin/chromium";
const BARE_PYTHON = process.env.NOUS_E2E_BARE_PYTHON || "/usr/bin/python3";
const SLOW = 90_000;
// the first start installs ~65 bundled wheels into a venv: minutes on a busy 2-core machine
const FIRST_START = 600_000;

let scratch, workspace, codeServer, browser, page, port, logs = "";
const DATABASES =
  "Databases per environment:\n\n| environment | database | backups |\n|---|---|---|\n| staging | orders_staging | daily |\n| production | orders_prod | hourly |\n";

function log(message) {
  const line = `[e2e ${new Date().toISOString().slice(11, 19)}] ${message}`;
  console.log(line);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

async function until(what, check, timeout = SLOW, interval = 500) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, interval));
  }
  if (page) await page.screenshot({ path: join(OUT, `timeout-${what.replace(/\W+/g, "-")}.png`) }).catch(() => {});
  throw new Error(`timed out after ${timeout} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ""}`);
}

function makeWorkspace(base) {
  const ws = join(base, "shop");
  mkdirSync(join(ws, "docs", "adr"), { recursive: true });
  writeFileSync(join(ws, "pyproject.toml"), '[project]\nname = "shop"\nversion = "0.1.0"\n');
  writeFileSync(join(ws, "app.py"), "def checkout(cart):\n    return sum(item.price for item in cart)\n");
  writeFileSync(
    join(ws, "docs", "adr", "0001-payments-through-gateway.md"),
    "# 1. Payments go through the PaymentGateway adapter\n\n## Status\n\nAccepted\n\n## Context\n\n" +
      "We called the card processor from many places.\n\n## Decision\n\nAll payments go through the " +
      "PaymentGateway adapter in shop/payments.py; nothing calls the card processor directly.\n\n" +
      "## Consequences\n\nOne place to mock in tests.\n",
  );
  writeFileSync(
    join(ws, "AGENTS.md"),
    "# Agent instructions\n\n## Conventions\n\n- Money is stored as integer cents, never floats.\n" +
      "- Every public function has a docstring.\n",
  );
  return ws;
}

function remember(db, ws, kind, text) {
  execFileSync(PYTHON, ["-m", "nous", "--db", db, "--workspace", ws, "remember", "--kind", kind, text], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

function fakeRequests() {
  const file = join(OUT, "fake-model.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

function textOf(message) {
  return message.parts.map((p) => p.text || "").join("");
}

/** Run a command from the palette; once more after Escape when the palette does not take it (under
 * load it was seen inert: closed by a focus change right after it opened). */
async function runCommand(title) {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press("F1");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible", timeout: 20_000 });
      await input.fill(">" + title, { timeout: 15_000 });
      await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 20_000 });
      await page.keyboard.press("Enter");
      return;
    } catch (err) {
      if (attempt >= 2) throw err;
      log(`${title}: ${err.message.split("\n")[0]}; again after Escape`);
      await page.screenshot({ path: join(OUT, `retry-${title.replace(/\W+/g, "-")}.png`) }).catch(() => {});
      await page.keyboard.press("Escape");
      await page.waitForTimeout(1000);
    }
  }
}

/** Show Context for… with `text` (an input box; reopened when it closed, see typeInto). */
async function showContextFor(text) {
  await typeInto("Nous: Show Context for…", text);
}

/** Close whatever a failed quick-input step left open (the pick, a dialog it opened) before the
 * step runs again; `what` and the error go to the log, a screenshot to the out folder. */
async function againAfterEscape(what, err, attempt) {
  log(`${what} (attempt ${attempt}): ${err.message.split("\n")[0]}; again after Escape`);
  await page.screenshot({ path: join(OUT, `retry-${what.replace(/\W+/g, "-")}-${attempt}.png`) }).catch(() => {});
  await page.keyboard.press("Escape");
  await page.waitForTimeout(1000);
}

/** The quick input a command opened: wait for its title (not the palette's box still closing). */
async function quickInput(title) {
  const widget = page.locator(".quick-input-widget").first();
  if (title) await widget.locator(".quick-input-title", { hasText: title }).first().waitFor({ state: "visible", timeout: 20_000 });
  const input = widget.locator("input").first();
  await input.waitFor({ state: "visible", timeout: 20_000 });
  return { widget, input };
}

/** Run `command` and choose the row of its quick pick holding `item` (after typing `filter` into
 * the pick's box, when given). Under load a focus change was seen to close the pick before the
 * click: when the pick does not show, its row does not, the choice does not take (`choose`, a click
 * by default) or `chosen` does not see it land, the pick is closed and reopened — the command run
 * again — up to `tries` times. `title` is the pick's title; `listed(rows)` checks the other rows
 * first; `chosen()` waits for what the choice opens and its result is returned. */
async function pickFrom(command, item, { title, filter, listed, choose, chosen, tries = 3 } = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      await runCommand(command);
      const { widget, input } = await quickInput(title);
      if (filter !== undefined) await input.fill(filter, { timeout: 10_000 });
      const rows = widget.locator(".quick-input-list .monaco-list-row");
      const row = rows.filter({ hasText: item }).first();
      await row.waitFor({ state: "visible", timeout: 20_000 });
      if (listed) await listed(rows);
      if (choose) await choose(row);
      else await row.click({ timeout: 10_000 });
      return chosen ? await chosen() : undefined;
    } catch (err) {
      if (attempt >= tries) throw err;
      await againAfterEscape(command, err, attempt);
    }
  }
}

/** Run `command` and type `text` into the input box it opens, then Enter; the box is reopened
 * when it closed before it took the text (seen under load: inert, closed by a focus change right
 * after it opened), up to `tries` times. */
async function typeInto(command, text, { tries = 3 } = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      await runCommand(command);
      const { input } = await quickInput();
      await input.fill(text, { timeout: 10_000 });
      await page.keyboard.press("Enter");
      return;
    } catch (err) {
      if (attempt >= tries) throw err;
      await againAfterEscape(command, err, attempt);
    }
  }
}

async function readJson(name, timeout = SLOW) {
  const file = join(OUT, name);
  return until(`${name}`, () => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined), timeout);
}

async function dumpState() {
  rmSync(join(OUT, "state.json"), { force: true });
  await runCommand("Nous E2E: Dump State");
  return readJson("state.json", 30_000);
}

async function chatInput() {
  const editor = page.locator(".interactive-input-part .monaco-editor").first();
  await editor.waitFor({ state: "visible", timeout: 30_000 });
  return editor;
}

/** Type `prompt` into the chat input and send it. What the input holds is read back first and
 * typed again when it differs (seen on a loaded machine: the participant suggestion took "@no" as
 * "@nous " while "us how are prices…" was still being typed), up to three times. */
async function ask(prompt) {
  const editor = await chatInput();
  for (let attempt = 1; ; attempt++) {
    await editor.click({ force: true });
    // the participant is sticky: the input may already start with "@nous "
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Backspace");
    await page.keyboard.type(prompt, { delay: 15 });
    await page.waitForTimeout(300);
    // (a long prompt wraps: the view's lines are joined; \s takes Monaco's no-break spaces too)
    const held = (await editor.locator(".view-lines").innerText()).replace(/\s+/g, " ").trim();
    if (held === prompt || attempt >= 3) break;
    log(`the chat input held “${held}”, not “${prompt}”: typed again`);
    await page.keyboard.press("Escape"); // close a suggestion before the input is cleared
  }
  await page.keyboard.press("Enter");
}

/** The text of a rendered view (the Markdown preview of a manifest or a record: a webview, so an
 * iframe in an iframe) that matches `re`. */
async function rendered(re, timeout = 30_000) {
  return until(`a rendered view matching ${re}`, async () => {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      const text = await frame.locator("body").innerText({ timeout: 1000 }).catch(() => "");
      if (re.test(text)) return text;
    }
    return undefined;
  }, timeout);
}

function statusItem() {
  return page.locator(".statusbar-item", { hasText: /^\s*Nous\b/ }).first();
}

function compact(n) {
  if (n < 1000) return String(n);
  return (n / 1000).toFixed(1).replace(/\.0$/, "") + "k";
}

before(async () => {
  const started = Date.now();
  assert.ok(existsSync(VSIX), `the packaged extension is missing: ${VSIX} (run scripts/test-vscode)`);
  assert.ok(existsSync(PYTHON), `no Python with nous at ${PYTHON}`);
  assert.match(VSIX, /linux-x64/, "the e2e installs the platform VSIX that brings its server (scripts/package)");
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  scratch = mkdtempSync(join(tmpdir(), "nous-e2e-"));
  workspace = makeWorkspace(scratch);
  const db = join(scratch, "memory.db");
  remember(db, workspace, "decision", "Memories live in SQLite with FTS5; we never add a Postgres dependency.");
  remember(db, workspace, "procedure", "To release: bump the version in pyproject.toml, tag vX.Y.Z, push the tag.");
  // a memory whose text is Markdown with a table (its record renders it)
  remember(db, workspace, "fact", DATABASES);

  execFileSync(join(HERE, "..", "node_modules", ".bin", "vsce"), ["package", "--allow-missing-repository", "--out", FAKE_VSIX], {
    cwd: join(HERE, "fake-model"),
    stdio: ["ignore", "ignore", "inherit"],
  });
  const extensions = join(scratch, "extensions");
  const userData = join(scratch, "user-data");
  // The machine code-server sees: its python3 is a Python without Nous (checked), the repository's
  // .venv is off PATH, and pip has no configuration, no index and no find-links.
  const bareBin = join(scratch, "bare-bin");
  mkdirSync(bareBin);
  for (const name of ["python3", "python3.11", "python"]) symlinkSync(BARE_PYTHON, join(bareBin, name));
  const venv = resolve(dirname(PYTHON), "..");
  const path = [bareBin, ...(process.env.PATH || "").split(delimiter).filter((p) => p && !resolve(p).startsWith(venv))].join(delimiter);
  const env = {
    ...process.env,
    PATH: path,
    XDG_CONFIG_HOME: join(scratch, "xdg-config"),
    XDG_DATA_HOME: join(scratch, "xdg-data"),
    XDG_CACHE_HOME: join(scratch, "xdg-cache"),
    PIP_CONFIG_FILE: "/dev/null",
    PIP_NO_INDEX: "1",
    PIP_INDEX_URL: "http://127.0.0.1:9/simple",
    PIP_EXTRA_INDEX_URL: "",
    PIP_FIND_LINKS: "",
  };
  delete env.VIRTUAL_ENV;
  delete env.PYTHONPATH;
  assert.throws(
    () => execFileSync("python3", ["-c", "import nous"], { env, stdio: ["ignore", "ignore", "pipe"] }),
    "code-server's python3 must lack Nous",
  );
  for (const vsix of [VSIX, FAKE_VSIX]) {
    execFileSync("code-server", ["--extensions-dir", extensions, "--user-data-dir", userData, "--install-extension", vsix, "--force"], {
      env,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  // code-server is a remote setup: machine-scoped settings (nous.python, nous.db) are read from
  // the Machine settings, not the User ones.
  mkdirSync(join(userData, "Machine"), { recursive: true });
  // no nous.python: the extension installs and runs its bundled server
  writeFileSync(join(userData, "Machine", "settings.json"), JSON.stringify({ "nous.db": db }, null, 2));
  mkdirSync(join(userData, "User"), { recursive: true });
  writeFileSync(
    join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        "nous.db": db,
        "nous.watch": false,
        "nousE2e.outDir": OUT,
        "security.workspace.trust.enabled": false,
        "telemetry.telemetryLevel": "off",
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "chat.tools.autoApprove": true,
        "chat.tools.global.autoApprove": true,
        "update.mode": "none",
      },
      null,
      2,
    ),
  );
  port = await freePort();
  codeServer = spawn(
    "code-server",
    [
      "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check",
      "--disable-workspace-trust", "--disable-getting-started-override", "--extensions-dir", extensions,
      "--user-data-dir", userData, workspace,
    ],
    { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  codeServer.stdout.on("data", (d) => (logs += d));
  codeServer.stderr.on("data", (d) => (logs += d));
  await until("code-server /healthz", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 120_000);
  log(`code-server up on ${port} after ${Math.round((Date.now() - started) / 1000)} s`);
  browser = await chromium.launchPersistentContext(join(scratch, "chromium"), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1500, height: 1000 },
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
    ],
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: SLOW });
  log("workbench shown");
});

after(async () => {
  if (page) await page.screenshot({ path: join(OUT, "final.png") }).catch(() => {});
  await browser?.close().catch(() => {});
  if (codeServer?.pid) {
    try {
      process.kill(-codeServer.pid, "SIGTERM");
    } catch {}
  }
  writeFileSync(join(OUT, "code-server.log"), logs);
  if (!process.env.NOUS_E2E_KEEP) rmSync(scratch, { recursive: true, force: true });
});

test("the VSIX installs its bundled server offline on first start, and the daemon runs from it", async () => {
  const progress = page.locator(".notification-toast", { hasText: "installing its server" }).first();
  await progress.waitFor({ timeout: SLOW });
  await page.screenshot({ path: join(OUT, "installing-server.png") });
  log(`progress: ${(await progress.innerText()).replace(/\s+/g, " ")}`);
  await until("the Nous status bar item", async () => /Nous \d/.test(await statusItem().innerText()), FIRST_START, 2000);
  // ready = the startup harvest is done (the ADR and AGENTS.md are in memory): asking before
  // that races the harvest
  const state = await until("the daemon to run and finish its startup harvest", async () => {
    const s = await dumpState();
    return s.running && s.status && s.status.project && s.status.indexState === "ready" ? s : undefined;
  });
  assert.equal(state.status.project, "shop");
  assert.equal(state.interpreter?.source, "bundled", JSON.stringify(state.interpreter));
  assert.ok(state.interpreter.path.startsWith(join(scratch, "user-data")), `the private venv lives in the global storage: ${state.interpreter.path}`);
  assert.ok(state.tools.includes("nous_recall") && state.tools.includes("nous_context") && state.tools.includes("nous_remember"));
  log(`daemon running, project ${state.status.project}, status bar “${await statusItem().innerText()}”`);
});

test("@nous typed in the chat input reaches the model with the injected context", async () => {
  await runCommand("Nous E2E: Open Chat with Fake Model");
  await ask("@nous how should the checkout code take payments?");
  const request = await until("the fake model's first request", () => fakeRequests()[0]);
  const first = textOf(request.messages[0]);
  assert.match(first, /context from Nous/);
  assert.match(first, /PaymentGateway/, "the ADR harvested from docs/adr was injected");
  assert.match(textOf(request.messages.at(-1)), /how should the checkout code take payments/);
  assert.ok(request.tools.includes("nous_recall"), "the participant offers nous_recall to the model");
  const answer = page.locator(".interactive-item-container", { hasText: "According to the project's records" }).last();
  await answer.waitFor({ timeout: SLOW });
  await runCommand("Maximize Secondary Side Bar");
  await page.waitForTimeout(800);
  // the references and progress steps sit in a collapsed "Completed N steps" part: open it
  const steps = answer.locator(".chat-used-context-label").first();
  await steps.scrollIntoViewIfNeeded();
  await steps.click();
  // What the question is about is injected (design §2.5): the payments ADR; beside it the censors
  // layer (design §2.7) carries the project's prohibition ("never floats"), once a session.
  const used = answer.getByText(/Used 2 references/).first();
  await used.waitFor({ timeout: 15_000 });
  await used.click();
  await answer.getByText("0001-payments-through-gateway.md").first().waitFor({ timeout: 15_000 });
  assert.match(first, /integer cents/, "the project's prohibition comes as a censor, once a session");
  writeFileSync(join(OUT, "chat-answer.txt"), await answer.innerText());
  await steps.scrollIntoViewIfNeeded();
  await page.mouse.move(600, 400);
  await page.mouse.wheel(0, -150);
  await page.waitForTimeout(700);
  await page.screenshot({ path: join(OUT, "chat-answer.png") });
});

test("the model's nous_recall tool call goes through the participant's tool loop to the daemon", async () => {
  const before = fakeRequests().length;
  await ask("@nous use recall: how do we store memories");
  const withResult = await until("the fake model to get the tool result", () =>
    fakeRequests()
      .slice(before)
      .find((r) => r.messages.some((m) => m.parts.some((p) => p.type === "toolResult"))),
  );
  const result = withResult.messages.flatMap((m) => m.parts).find((p) => p.type === "toolResult");
  assert.match(result.text, /SQLite with FTS5/, "the recalled memory came back from the daemon");
  await page.locator(".interactive-item-container", { hasText: "The recall found this in the project's records" }).last().waitFor({ timeout: SLOW });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(OUT, "chat-tool-loop.png") });
});

test("/remember in the chat stores a memory that /recall then finds", async () => {
  // (the next question's turn context would not repeat it: the text is already in the chat
  // history the participant sends, and the daemon drops memories the conversation already holds)
  await ask("@nous /remember decision: Orders are immutable once paid; refunds create a new credit order.");
  await page.locator(".interactive-item-container", { hasText: "Remembered decision" }).last().waitFor({ timeout: SLOW });
  await ask("@nous /recall can we edit a paid order to refund it?");
  const found = page.locator(".interactive-item-container", {
    hasText: "Orders are immutable once paid",
    hasNotText: "remember",
  });
  await found.last().waitFor({ timeout: SLOW });
  // the chat renders the answer progressively, with non-breaking spaces between some words
  await until("the recalled memory in full", async () =>
    /refunds create a new credit order/.test((await found.last().innerText()).replace(/\s+/g, " ")),
  );
});

test("Nous: Show Context for… opens the manifest of what would be injected", async () => {
  await showContextFor("where do card payments go?");
  const shown = await rendered(/Nous manifest: where do card payments go\?[\s\S]*PaymentGateway/);
  assert.match(shown, /a preview: shown, not injected/);
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(OUT, "manifest-preview.png") });
});

test("vscode.lm.invokeTool('nous_recall') honours the token budget it is given", async () => {
  rmSync(join(OUT, "invoke-recall.json"), { force: true });
  await runCommand("Nous E2E: Invoke Recall Tool");
  const result = await readJson("invoke-recall.json");
  assert.ok(result.ok, result.error);
  // the answer's own summary line (a recalled chat turn may quote an earlier one)
  const tokens = Number(/\(Nous: \d+ memor(?:y|ies) \((\d+) tokens\)[^\n]*\)\s*$/.exec(result.text)?.[1]);
  assert.ok(tokens > 0 && tokens <= 120, `recall used ${tokens} tokens for a budget of 120: ${result.text}`);
  assert.match(result.text, /embedding|vector|SQLite/i);
  // an agent-mode call (no @nous request in flight): the daemon gave its session an agent's limits
  const state = await dumpState();
  const call = state.manifests.filter((m) => m.title.startsWith("#nousRecall where do memories live")).at(-1);
  assert.equal(call?.sessionCap, 24_000, `the agent's session cap (agentSessionCap): ${JSON.stringify(call)}`);
  assert.match(call.sessionId, /^vscode-tools-/);
});

test("the status bar counts every injection of a chat session: three @nous answers and a tool call", async () => {
  await runCommand("Nous E2E: New Chat with Fake Model");
  const turns = [
    "@nous how are prices stored in the shop?",
    "@nous use recall: where do card payments go",
    "@nous which conventions apply to public functions?",
  ];
  for (const prompt of turns) {
    // (the chat list is virtual: older answers leave the DOM, so count the model's requests)
    const before = fakeRequests().length;
    await ask(prompt);
    // (the tool call takes the model two requests: the call, then the answer with its result)
    const requests = /use recall:/.test(prompt) ? 2 : 1;
    await until(`the model's answer to “${prompt}”`, () => fakeRequests().length >= before + requests);
    await page.waitForTimeout(1500);
  }
  const state = await until("the chat's tally", async () => {
    const s = await dumpState();
    return s.injected && s.injected.counts.turn === 3 && s.injected.counts.recall === 1 ? s : undefined;
  });
  const session = state.injected.sessionId;
  assert.match(session, /^vscode-chat-/);
  const manifests = state.manifests.filter((m) => m.sessionId === session && !m.preview);
  log(`manifests of ${session}: ${JSON.stringify(manifests)}`);
  // three answers' turn context and the model's nous_recall call, in the chat's own session
  assert.deepEqual(manifests.map((m) => m.mode).sort(), ["recall", "turn", "turn", "turn"]);
  const sum = manifests.reduce((n, m) => n + m.tokens, 0);
  assert.ok(sum > 0, JSON.stringify(manifests));
  assert.equal(state.injected.injected, sum);
  const expected = `Nous ${compact(sum)}/3k`;
  await until(`status bar “${expected}”`, async () => (await statusItem().innerText()).trim() === expected, 20_000);
  const bar = page.locator(".part.statusbar");
  await statusItem().hover();
  const hover = page.locator(".monaco-hover, .workbench-hover", { hasText: "injected into this chat session" }).first();
  await hover.waitFor({ timeout: 20_000 });
  const tip = flat(await hover.innerText());
  assert.ok(tip.includes(`${sum.toLocaleString("en-US")} tokens injected into this chat session (3 answers, 1 recall)`), tip);
  assert.match(tip, /Session cap \(startup context, recalls, expands\): \d+ \/ 3,000 tokens/);
  // the tooltip says chat capture is on (nous.capture's default, read back from nous/status)
  assert.match(tip, /Chat capture: on\b.*on this machine only/);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(OUT, "status-bar-tooltip.png") });
  await bar.screenshot({ path: join(OUT, "status-bar.png") });
  log(`status bar shows “${expected}”: the sum of the chat's ${manifests.length} manifests (${manifests.map((m) => m.tokens).join(" + ")} = ${sum})`);
  // click: the last manifest, rendered, with the same total
  await page.mouse.move(600, 300);
  await statusItem().click();
  const manifest = await rendered(/Nous manifest: which conventions apply to public functions\?/);
  assert.match(flat(manifest), new RegExp(`this chat session, every injection\\s+${sum.toLocaleString("en-US")} \\(3 answers, 1 recall\\)`), manifest);
  assert.doesNotMatch(manifest, /\d\.\d{5,}/, "no float artefacts");
  assert.doesNotMatch(manifest, /^\| /m, "a rendered table, not Markdown source");
  writeFileSync(join(OUT, "manifest.txt"), manifest);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(OUT, "manifest.png") });
  // its dropped memories are named by their titles, their numbers rounded
  const dropped = /Dropped \((\d+)\)\n([\s\S]*?)\nText as injected/.exec(manifest);
  if (dropped && Number(dropped[1]) > 0) {
    const rows = dropped[2].split("\n").filter((l) => /\t[0-9a-f]{8}\t/.test(l));
    log(`dropped rows: ${JSON.stringify(rows)}`);
    assert.ok(rows.some((r) => !/^\S+\t—\t/.test(r)), `a dropped memory with its title: ${JSON.stringify(rows)}`);
    for (const frame of page.frames()) {
      const heading = frame.getByText(/^Dropped \(\d+\)$/).first();
      if (await heading.count().catch(() => 0)) {
        await heading.evaluate((e) => e.scrollIntoView({ block: "start" })).catch(() => {});
        break;
      }
    }
    await page.waitForTimeout(600);
    await page.screenshot({ path: join(OUT, "manifest-dropped.png") });
  }
});

// -- the memory browser (design §11) ------------------------------------------------------------

async function browserState() {
  rmSync(join(OUT, "browser.json"), { force: true });
  await retrying("Nous E2E: Dump Memory Browser");
  return readJson("browser.json", 30_000);
}

/** Search Memories… for `text`, until the browser says it applied. */
async function searchMemories(text) {
  await typeInto("Nous: Search Memories…", text);
  return until("the search to apply", async () => {
    const s = await browserState();
    return s.filters.query === text ? s : undefined;
  }, 30_000);
}

function pane(title) {
  return page.locator(".pane", { has: page.locator(".pane-header", { hasText: title }) }).first();
}

/** A row by its memory's text: the row shows only the first words, its accessible label all. */
function memoryRow(text, title = "Memories") {
  return pane(title).locator(`.monaco-list-row[aria-label*=${JSON.stringify(text)}]`).first();
}

async function retrying(title) {
  try {
    await runCommand(title);
  } catch (err) {
    log(`${title}: ${err.message.split("\n")[0]}; retrying after Escape`);
    await page.screenshot({ path: join(OUT, `retry-${title.replace(/\W+/g, "-")}.png`) }).catch(() => {});
    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    await page.waitForTimeout(1000);
    await runCommand(title);
  }
}

/** Unfold `group` until its row for `text` shows. The click is checked, not trusted (a redraw of
 * the tree, a reload landing, can swallow it); while the row is not there the list is scrolled to
 * it (the tree renders only the rows in view) and reloaded (Refresh Memories: a reload that
 * started before the memory was written does not hold it), and the log says what the daemon,
 * the extension and the tree held at that moment. */
async function unfold(group, text, timeout = SLOW) {
  const row = memoryRow(text);
  let clicked = 0;
  let reloaded = Date.now();
  await until(`the row “${text}” in its group`, async () => {
    if (await row.count()) return true;
    if ((await group.getAttribute("aria-expanded")) !== "true") {
      // (a click the tree has not acted on yet is not clicked again: that would fold it back)
      if (Date.now() - clicked > 5000) {
        if (clicked) log("the group is still folded: clicked again");
        await group.click({ timeout: 5000 });
        clicked = Date.now();
      }
    } else if (Date.now() - reloaded > 5000) {
      const s = await browserState();
      const ids = new Set(s.memories.filter((m) => m.content.includes(text)).map((m) => m.id));
      const shown = await pane("Memories").locator(".monaco-list-row").evaluateAll((rows) => rows.map((r) => (r.getAttribute("aria-label") || r.textContent || "").slice(0, 30)));
      log(`no row “${text}” yet: the daemon ${ids.size ? "lists" : "does not list"} it, the browser's captured group ${s.captured.some((id) => ids.has(id)) ? "holds" : "lacks"} it, the tree shows ${JSON.stringify(shown)}; scroll, Refresh Memories`);
      await group.hover();
      await page.mouse.wheel(0, 300);
      await runCommand("Nous: Refresh Memories");
      reloaded = Date.now();
    }
    await row.waitFor({ timeout: 2000 });
    return true;
  }, timeout, 250);
}

const RELEASE_NOW = "To release: run scripts/release.sh with the new version number; it tags vX.Y.Z and pushes the tag.";

test("the memory browser lists memories with kind, status, source and use; filters narrow it", async () => {
  rmSync(join(OUT, "layout.json"), { force: true });
  await runCommand("Nous E2E: Hide Secondary Side Bar");
  await readJson("layout.json", 30_000);
  await runCommand("Nous: Open Memory Browser");
  // the side bar at its default width: each row shows its kind (icon), first words, status and
  // source, none of it cut
  const decision = memoryRow("Memories live in SQLite with FTS5");
  await decision.waitFor({ timeout: SLOW });
  await until("the row to show status and source", async () => /Memories l\w*…\s*recorded · manu/.test(await decision.innerText()));
  await memoryRow("PaymentGateway").waitFor({ timeout: 20_000 });
  // what chat captured on its own is listed apart from project knowledge, in a group of its own
  // (folded at first): the status-bar test's questions are there, kept for their session only
  const knowledgeGroup = pane("Memories").locator(".monaco-list-row", { hasText: "Project knowledge" }).first();
  const capturedGroup = pane("Memories").locator(".monaco-list-row", { hasText: "Captured from chat" }).first();
  await knowledgeGroup.waitFor({ timeout: 20_000 });
  await capturedGroup.waitFor({ timeout: 20_000 });
  await unfold(capturedGroup, "how are prices stored in the shop");
  const groups = await browserState();
  const listed = new Map(groups.memories.map((m) => [m.id, m]));
  assert.ok(groups.captured.length > 0, JSON.stringify(groups));
  assert.deepEqual(groups.captured.filter((id) => listed.get(id)?.captured !== true), [], "only captures in the captured group");
  const knowledgeIds = groups.ids.filter((id) => !groups.captured.includes(id));
  assert.deepEqual(knowledgeIds.filter((id) => listed.get(id)?.captured), [], "no capture among project knowledge");
  assert.ok(knowledgeIds.some((id) => /PaymentGateway/.test(listed.get(id)?.content ?? "")), "the harvested ADR is project knowledge");
  assert.ok(groups.captured.some((id) => listed.get(id)?.tags.includes("asking")), "an asking turn is a capture");
  assert.equal(groups.total, groups.totals.knowledge + groups.totals.captured);
  log(`browser groups: ${groups.totals.knowledge} project knowledge, ${groups.totals.captured} captured from chat`);
  const width = (await page.locator(".part.sidebar").first().boundingBox())?.width;
  const rows = pane("Memories").locator(".monaco-list-row");
  const clipped = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    const fit = await row.locator(".monaco-icon-label-container").first().evaluate((e) => ({ text: e.innerText, scroll: e.scrollWidth, client: e.clientWidth })).catch(() => undefined);
    if (fit && fit.scroll > fit.client + 1) clipped.push(fit);
    if (fit) log(`row at ${width}px: “${fit.text.replace(/\s+/g, " ")}” ${fit.scroll}/${fit.client}px`);
  }
  assert.deepEqual(clipped, [], `rows cut at the default side-bar width (${width}px)`);
  await capturedGroup.scrollIntoViewIfNeeded();
  await page.mouse.move(900, 500);
  await page.waitForTimeout(600);
  await page.screenshot({ path: join(OUT, "browser-captured.png") });
  await pane("Memories").screenshot({ path: join(OUT, "browser-captured-pane.png") });
  // folded again: the rest of the test reads project knowledge
  await capturedGroup.click();
  await until("the captured group to fold", async () => (await capturedGroup.getAttribute("aria-expanded")) === "false", 10_000);
  const icon = await decision.locator(".codicon").first().getAttribute("class");
  assert.match(icon ?? "", /codicon-law/, "a decision's icon");
  const all = await browserState();
  assert.ok(all.total >= 4, `the list holds the harvested and remembered memories: ${JSON.stringify(all)}`);
  await page.waitForTimeout(600);
  await page.screenshot({ path: join(OUT, "browser-list.png") });
  // the rest is in the row's tooltip, with the source as a name (inline code)
  await decision.hover();
  const tooltip = page.locator(".monaco-hover, .workbench-hover", { hasText: "Captured" }).first();
  await tooltip.waitFor({ timeout: 20_000 });
  assert.match(flat(await tooltip.innerText()), /decision · recorded · [0-9a-f]{8}.*Memories live in SQLite with FTS5; we never add a Postgres dependency\..*Source: manual/);
  await page.waitForTimeout(600);
  await page.screenshot({ path: join(OUT, "browser-row-tooltip.png") });
  await page.mouse.move(900, 500);
  // a memory's own Markdown renders in its record: its table too
  await memoryRow("Databases per environment").click();
  const tableRecord = await rendered(/fact: Databases per environment[\s\S]*Provenance/);
  assert.match(tableRecord, /environment\tdatabase\tbackups\n\s*staging\torders_staging\tdaily\n\s*production\torders_prod\thourly/, tableRecord);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(OUT, "browser-record-table.png") });

  // a kind filter through the Filter quick pick (keyboard: type, toggle with a click, Enter); a
  // toggle already on (a try before whose pick closed after the click) is kept, not undone
  const filtered = await pickFrom("Nous: Filter Memories…", "procedure", {
    title: "Filter memories",
    filter: "procedure",
    choose: async (option) => {
      if ((await option.getAttribute("aria-checked")) !== "true") await option.click({ timeout: 10_000 });
      await until("the procedure option to be checked", async () => (await option.getAttribute("aria-checked")) === "true", 10_000);
      await page.screenshot({ path: join(OUT, "browser-filter.png") });
      await page.keyboard.press("Enter");
    },
    chosen: () =>
      until("the kind filter to apply", async () => {
        const s = await browserState();
        return s.filters.kinds.length === 1 && s.ids.length > 0 ? s : undefined;
      }, 30_000),
  });
  assert.deepEqual(filtered.filters.kinds, ["procedure"]);
  await memoryRow("To release").waitFor({ timeout: 20_000 });
  assert.equal(await memoryRow("Memories live in SQLite").count(), 0, "a decision is filtered out");

  // then a search on top of it
  const searched = await searchMemories("release tag");
  assert.deepEqual(searched.filters.kinds, ["procedure"]);
  assert.equal(searched.ids.length, 1, JSON.stringify(searched));
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(OUT, "browser-filtered.png") });
});

test("a memory opens as a record; its edit is re-embedded and the next @nous answer uses it", async () => {
  await memoryRow("To release").click();
  const record = await rendered(/procedure: To release[\s\S]*Provenance[\s\S]*Never injected/);
  assert.doesNotMatch(record, /^\| field \|/m, "a rendered record, not Markdown source");
  writeFileSync(join(OUT, "record.txt"), record);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(OUT, "browser-record.png") });

  // Edit… (the record is the active editor) → Text → the new text
  const input = await pickFrom("Nous: Edit Memory…", "Text", {
    title: "Edit procedure",
    filter: "Text",
    choose: () => page.keyboard.press("Enter"),
    chosen: async () => {
      const { input } = await quickInput("Edit the text of");
      await until("the text input box", async () => (await input.inputValue()).includes("bump the version"), 20_000);
      return input;
    },
  });
  await input.fill(RELEASE_NOW);
  await page.keyboard.press("Enter");
  await rendered(/procedure: To release: run scripts\/release\.sh/);

  await runCommand("Nous E2E: Open Chat with Fake Model");
  const before = fakeRequests().length;
  await ask("@nous how do we release a new version?");
  const request = await until("the fake model's request after the edit", () => fakeRequests()[before]);
  const first = textOf(request.messages[0]);
  assert.match(first, /scripts\/release\.sh/, "the edited text was injected");
  assert.doesNotMatch(first, /bump the version in pyproject/, "the old text is gone");
  await page.locator(".interactive-item-container", { hasText: "According to the project's records" }).last().waitFor({ timeout: SLOW });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(OUT, "browser-edit-chat.png") });
});

test("forgetting from the row's context menu takes the memory out of the list", async () => {
  await page.keyboard.press("Escape");
  rmSync(join(OUT, "layout.json"), { force: true });
  await retrying("Nous E2E: Hide Secondary Side Bar");
  await readJson("layout.json", 30_000);
  await retrying("Nous: Open Memory Browser");
  // the view's own title button (shown while filtered); the list is filtered here, not left so
  // by the test before (a failure there before its filters applied does not fail this one too)
  // (a command palette opened while the view takes focus can go inert: the list first)
  await memoryRow("To release").waitFor({ timeout: SLOW });
  await page.waitForTimeout(1000);
  const { filters } = await browserState();
  if (!filters.query && !filters.kinds.length) {
    log(`the list is not filtered (${JSON.stringify(filters)}): a search first`);
    await searchMemories("release tag");
  }
  const header = pane("Memories").locator(".pane-header").first();
  const clear = header.locator(".action-label[aria-label='Clear Memory Filters']").first();
  await until("the Clear Memory Filters button", async () => {
    await header.hover();
    await clear.click({ timeout: 5000 });
    return true;
  }, SLOW);
  await until("the filters to clear", async () => {
    const { filters } = await browserState();
    return !filters.query && !filters.kinds.length;
  }, 30_000);
  const row = memoryRow("Memories live in SQLite");
  await row.waitFor({ timeout: SLOW });
  await row.click({ button: "right" });
  const item = page.locator(".monaco-menu .action-label", { hasText: "Forget Memory" }).first();
  await item.waitFor({ timeout: 20_000 });
  await page.waitForTimeout(800); // a menu ignores a click that comes right after it opened
  await page.screenshot({ path: join(OUT, "browser-context-menu.png") });
  await item.hover();
  await page.keyboard.press("Enter");
  await page.waitForTimeout(1500);
  await page.screenshot({ path: join(OUT, "browser-forget-confirm.png") });
  const dialog = page.locator(".monaco-dialog-box, [role=dialog]").first();
  await dialog.waitFor({ state: "attached", timeout: 20_000 });
  writeFileSync(join(OUT, "forget-dialog.html"), await dialog.evaluate((e) => e.outerHTML).catch((e) => String(e)));
  await dialog.getByRole("button", { name: "Forget", exact: true }).first().click();
  await until("the row to disappear", async () => (await memoryRow("Memories live in SQLite").count()) === 0, 30_000);
  const after = await browserState();
  const gone = await until("the daemon to list it no more", async () => {
    const rows = await nousListAll();
    return rows.every((m) => !m.content.includes("Memories live in SQLite")) ? rows : undefined;
  });
  assert.ok(gone.length >= 1 && after.total === gone.length);
});

async function nousListAll() {
  rmSync(join(OUT, "browser.json"), { force: true });
  await runCommand("Nous E2E: Dump Memory Browser");
  const state = await readJson("browser.json", 30_000);
  return state.memories;
}

test("the review queue holds what chat captured, with a badge; Keep takes it out", async () => {
  const reviewPane = pane("Review");
  const header = reviewPane.locator(".pane-header").first();
  if ((await header.getAttribute("aria-expanded")) === "false") await header.click();
  const row = memoryRow("Orders are immutable once paid", "Review");
  await row.waitFor({ timeout: SLOW });
  const state = await browserState();
  assert.equal(state.reviewPending, 1, JSON.stringify(state));
  await until("the review badge", async () => /\b1\b/.test(await reviewPane.locator(".pane-header").innerText()));
  // its record says which chat session captured it
  await row.click();
  await rendered(/Captured from the chat session/);
  await row.hover();
  await page.waitForTimeout(600);
  await page.screenshot({ path: join(OUT, "browser-review.png") });
  await row.locator(".action-label[aria-label^='Keep']").first().click();
  await until("the queue to empty", async () => (await browserState()).reviewPending === 0, 30_000);
  await reviewPane.locator(".monaco-list-row", { hasText: "Nothing to review" }).first().waitFor({ timeout: 20_000 });
});

async function probeStartup() {
  rmSync(join(OUT, "startup-probe.json"), { force: true });
  await runCommand("Nous E2E: Probe Startup Context");
  const probe = await readJson("startup-probe.json", 30_000);
  assert.ok(probe.ok, probe.error);
  return probe;
}

const DECISION = "We decided to compute shipping fees by parcel weight, not a flat rate.";
// the note keeps what the step is, under its tag ("next: add a carrier_rates migration…"), without
// the reply's own label ("Next step:") doubled
const NEXT_STEP = "add a carrier_rates migration with the weight tiers.";
const SESSION_A = "let's settle how shipping fees are computed: by parcel weight or a flat rate?";

function flat(text) {
  return text.replace(/\s+/g, " ");
}

test("chat session A settles a decision and leaves a next step; session B's #nousContext starts with both as session notes", async () => {
  // session A: a new chat; the user asks, the model settles it (the fake model's reply)
  await runCommand("Nous E2E: New Chat with Fake Model");
  await ask(`@nous ${SESSION_A}`);
  await page.locator(".interactive-item-container", { hasText: "carrier_rates migration" }).last().waitFor({ timeout: SLOW });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(OUT, "session-a.png") });
  // the participant sent the prompt (nous/context, turn mode) and the reply (nous/feedback) with
  // the session id; the daemon drew the notes from the reply: a new session's startup holds them
  const probe = await until("session A's notes in a new session's startup context", async () => {
    const p = await probeStartup();
    const notes = p.items.filter((i) => i.kind === "note").map((i) => flat(i.text));
    return notes.some((n) => n.includes(DECISION)) && notes.some((n) => n.includes(NEXT_STEP)) ? p : undefined;
  });
  log(`startup notes: ${JSON.stringify(probe.items.filter((i) => i.kind === "note").map((i) => i.text))}`);

  // session B: another new chat; #nousContext runs the startup context for it
  const before = fakeRequests().length;
  await runCommand("Nous E2E: New Chat with Fake Model");
  await ask("@nous #nousContext where did we leave off?");
  const request = await until("the fake model to get session B's #nousContext result", () =>
    fakeRequests()
      .slice(before)
      .find((r) => r.messages.some((m) => m.parts.some((p) => /^Result of nous_context:/.test(p.text || "")))),
  );
  const result = request.messages.flatMap((m) => m.parts).find((p) => /^Result of nous_context:/.test(p.text || "")).text;
  assert.ok(flat(result).includes(DECISION), `the decision is in session B's startup context:\n${result}`);
  assert.ok(flat(result).includes(NEXT_STEP), `the next step is in session B's startup context:\n${result}`);
  assert.doesNotMatch(result, /let's settle how shipping fees/, "session A's question is a turn, not a note");
  // the model says where the last session left off: the notes again (a reply Nous does not keep)
  await page.locator(".interactive-item-container", { hasText: "Where we left off" }).last().waitFor({ timeout: SLOW });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(OUT, "session-b-chat.png") });

  // the manifest of #nousContext lists both as session notes (kind note)
  await runCommand("Nous: Show Last Manifest");
  // the rendered table: a row's cells are separated by tabs; a note's text leads with its tag
  // ("dec: …", "next: …"), the seeds' session codes
  const row = (text) => new RegExp(`\\bnote\\t[^\\n]*\\tchat\\t(?:\\w+: )?${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`);
  const shown = await rendered(/Nous manifest: #nousContext where did we leave off\?/);
  const rowsShown = await until("the session notes in the manifest", async () => {
    const text = await rendered(/Nous manifest: #nousContext where did we leave off\?/);
    return row(DECISION).test(text) && row(NEXT_STEP).test(text) ? text : undefined;
  }, 30_000);
  assert.ok(rowsShown && shown);
  assert.match(shown, /\bstartup context, frame/);
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(OUT, "session-notes.png") });
});

test("Nous: Forget Chat Session… removes session A's turns and notes after a modal confirmation", async () => {
  const dialog = page.locator(".monaco-dialog-box");
  await pickFrom("Nous: Forget Chat Session…", "let's settle how shipping fees are computed", {
    title: "Nous: Forget Chat Session…",
    // the sessions the participant saw: B, then A
    listed: async (rows) => {
      await rows.filter({ hasText: "where did we leave off?" }).first().waitFor({ state: "visible", timeout: 10_000 });
      await page.screenshot({ path: join(OUT, "forget-session-pick.png") });
    },
    chosen: () => dialog.waitFor({ state: "visible", timeout: 20_000 }),
  });
  assert.match(flat(await dialog.innerText()), /Forget the chat session “let's settle how shipping fees/);
  await page.screenshot({ path: join(OUT, "forget-session-confirm.png") });
  await dialog.getByRole("button", { name: "Forget", exact: true }).click();
  const toast = page.locator(".notification-toast", { hasText: "of the chat session" }).first();
  await toast.waitFor({ timeout: SLOW });
  const said = flat(await toast.innerText());
  const forgotten = Number(/forgot (\d+) memor/.exec(said)?.[1]);
  // the model's reply, the decision note and the next-step note (the user's question asked and
  // told nothing: it was not kept)
  assert.ok(forgotten >= 3, said);
  await page.waitForTimeout(600); // the toast slides in
  await page.screenshot({ path: join(OUT, "forget-session-done.png") });
  const probe = await probeStartup();
  const left = probe.items.filter((i) => /shipping fees|carrier_rates/.test(i.text));
  assert.deepEqual(left, [], "nothing of session A is left in a new session's startup");
});

test("an agent-mode #nousContext call leaves its task's notes in its chat's session, not the task; a preview keeps nothing", async () => {
  // Show Context for… is a preview: what it is given is not kept
  await showContextFor("We decided to bill refunds in euros. Next step: wire the refund webhook into the ledger.");
  await rendered(/Nous manifest: We decided to bill refunds/);
  // the tool's task is reported through nous/turn (tool: nous_context) under the tool's session:
  // the decision and the next step it states are session notes, the task itself is a tool's input
  rmSync(join(OUT, "invoke-context.json"), { force: true });
  await runCommand("Nous E2E: Invoke Context Tool");
  const invoked = await readJson("invoke-context.json");
  assert.ok(invoked.ok, invoked.error);
  const kept = await until("the tool's task's notes", async () => {
    const { memories } = await browserState();
    const notes = memories.filter((m) => m.kind === "note" && /invoice export to the nightly job|nightly export tests/.test(m.content));
    return notes.length >= 2 ? { notes, memories } : undefined;
  });
  for (const note of kept.notes) assert.match(note.source, /^chat:vscode-tools-[^#]+#\d+$/);
  assert.deepEqual(kept.memories.filter((m) => m.kind === "episode" && /invoice export to the nightly job/.test(m.content)), [], "the task is no turn");
  // the preview ran before the tool's turn on the daemon's one store thread: had it been kept, it would be listed
  assert.deepEqual(kept.memories.filter((m) => /refund webhook|refunds in euros/.test(m.content)), []);
});

test("another agent's tool calls in one chat leave their notes in that chat's session (the invocation token)", async () => {
  const file = join(OUT, "agent-tool.jsonl");
  const calls = () => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
  await runCommand("Nous E2E: New Chat with Fake Model");
  await ask("@fakeagent Rename the ledger table to journal; we decided to keep the old view. Next step: update the journal migration.");
  await until("the agent's first nous_context call", () => calls().length >= 1);
  await ask("@fakeagent We decided to split the journal writer into its own module. Next step: reuse it in the exporter.");
  await until("the agent's second nous_context call", () => calls().length >= 2);
  for (const call of calls()) assert.ok(call.ok, call.error);
  log(`the tool invocation token's fields: ${JSON.stringify(calls()[0].tokenFields)}`);
  const { first, second, memories } = await until("both tasks' notes in one chat session", async () => {
    const { memories } = await browserState();
    const note = (re) => memories.find((m) => m.kind === "note" && re.test(m.content));
    const found = { first: note(/ledger table to journal/), second: note(/journal writer into its own module/), memories };
    return found.first && found.second ? found : undefined;
  });
  assert.deepEqual(memories.filter((m) => m.kind === "episode" && /ledger table|journal writer/.test(m.content)), [], "a tool's task is no turn");
  const [, sessionA, indexA] = /^chat:(vscode-agent-[0-9a-f]+)#(\d+)$/.exec(first.source) ?? [];
  const [, sessionB, indexB] = /^chat:(vscode-agent-[0-9a-f]+)#(\d+)$/.exec(second.source) ?? [];
  assert.ok(sessionA, `the chat's own session, from its token: ${first.source}`);
  assert.equal(sessionB, sessionA, "one chat, one session");
  assert.equal(Number(indexB), Number(indexA) + 1);
});

test("a nous.* setting change restarts the daemon; a Python without nous gets the install command", async () => {
  const python = BARE_PYTHON;
  rmSync(join(OUT, "set-python.json"), { force: true });
  await runCommand("Nous E2E: Point nous.python at a Python without Nous");
  await readJson("set-python.json", 30_000);
  const toast = page.locator(".notification-toast", { hasText: "not installed for" }).first();
  await toast.waitFor({ timeout: SLOW });
  const text = await toast.innerText();
  assert.ok(text.includes(`not installed for ${python}`), text);
  // the bundled wheels, offline; never `pip install nous` (another project on the index)
  assert.match(text, new RegExp(`${python.replace(/\W/g, "\\$&")} -m pip install --no-index --find-links \\S+bundled/wheels nous-context`), text);
  assert.doesNotMatch(text, /pip install nous(\s|$)/, text);
  // three short buttons, none cut ("Use Bundled …", "Run in Ter…" before)
  const buttons = toast.locator(".monaco-button");
  const labels = (await buttons.allInnerTexts()).map((t) => t.trim()).filter(Boolean);
  assert.deepEqual(labels, ["Use Bundled", "Install…", "Choose Python"], text);
  for (let i = 0; i < (await buttons.count()); i++) {
    const fit = await buttons.nth(i).evaluate((e) => ({ text: e.innerText, scroll: e.scrollWidth, client: e.clientWidth }));
    assert.ok(fit.scroll <= fit.client + 1, `the button “${fit.text}” is cut: ${JSON.stringify(fit)}`);
  }
  await until("the status bar to say the daemon is stopped", async () => (await statusItem().innerText()).trim() === "Nous");
  await page.waitForTimeout(1000);
  await page.screenshot({ path: join(OUT, "missing-package.png") });
  // "Use Bundled" clears nous.python: the daemon comes back on the venv installed at first
  // start (its stamp matches: no second install)
  // (the status bar's hover from the previous test may still cover the toast: move away first)
  // (no Escape: it hides the notification toasts)
  await page.mouse.move(600, 300);
  await page.locator(".monaco-hover, .workbench-hover").first().waitFor({ state: "hidden", timeout: 10_000 }).catch(() => {});
  await toast.getByRole("button", { name: "Use Bundled" }).click();
  await until("the daemon back on the bundled server", async () => {
    const s = await dumpState();
    return s.running && s.interpreter?.source === "bundled" && s.status?.project === "shop" ? s : undefined;
  }, SLOW, 1000);
  await until("the Nous status bar item again", async () => /Nous \d/.test(await statusItem().innerText()), SLOW);
});

// -- the feedback loop (issue 27 item 6) -----------------------------------------------------

const WEBHOOKS = "Carrier webhooks are verified with an HMAC-SHA256 signature before any parcel status changes.";
const OWN_WORDS = "in your own words: how do we verify carrier webhooks?";
// the fake model's reply (e2e/fake-model): the decision said over in its own sentence
const PARAPHRASE = "We only let a carrier webhook change a parcel's status after its HMAC-SHA256 signature checks out.";

/** `nous stats` from the command line against the e2e's database (the daemon's project). */
function statsFromCli(...args) {
  const out = execFileSync(PYTHON, ["-m", "nous", "--db", join(scratch, "memory.db"), "--workspace", workspace, "stats", "--json", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  return JSON.parse(out);
}

test("an @nous reply that paraphrases one injected memory: the manifest, the status bar and nous stats count it referenced", async () => {
  // a decision nothing has injected yet (its usage is its own), remembered in one chat…
  await runCommand("Nous E2E: New Chat with Fake Model");
  await ask(`@nous /remember decision: ${WEBHOOKS}`);
  await page.locator(".interactive-item-container", { hasText: "Remembered decision" }).last().waitFor({ timeout: SLOW });
  // …and asked about in the next (in the same chat the history already holds it)
  await runCommand("Nous E2E: New Chat with Fake Model");
  const before = fakeRequests().length;
  await ask(`@nous ${OWN_WORDS}`);
  const request = await until("the model's request", () => fakeRequests().slice(before).find((r) => textOf(r.messages.at(-1)).includes(OWN_WORDS)));
  assert.ok(textOf(request.messages[0]).includes(WEBHOOKS), "the decision was injected");
  await page.locator(".interactive-item-container", { hasText: "carrier webhook change a parcel" }).last().waitFor({ timeout: SLOW });
  await page.locator(".interactive-item-container", { hasText: "signature checks out" }).last().waitFor({ timeout: SLOW });
  log(`the model's reply: ${PARAPHRASE}`);
  // the reply was judged (nous/feedback) and the session's figures fetched (nous/stats)
  const state = await until("the reply's verdicts and the session's stats", async () => {
    const s = await dumpState();
    const answer = s.manifests?.filter((m) => m.title === OWN_WORDS && !m.preview).at(-1);
    return answer && Object.keys(answer.judged).length > 0 && s.sessionStats?.sessionId === answer.sessionId ? { ...s, answer } : undefined;
  });
  const { answer, sessionStats } = state;
  log(`the answer's items: ${JSON.stringify(answer.items.map((i) => `${i.id.slice(0, 8)} ${i.kind} ${i.text.slice(0, 60)}`))}; judged ${JSON.stringify(answer.judged)}`);
  const decision = answer.items.find((i) => i.text.includes(WEBHOOKS));
  assert.ok(decision, JSON.stringify(answer.items));
  const referenced = Object.entries(answer.judged).filter(([, used]) => used).map(([id]) => id);
  assert.deepEqual(referenced, [decision.id], "the paraphrased memory, and only it, is referenced");
  const judged = Object.keys(answer.judged).length;
  assert.equal(judged, answer.items.length, "every injected item of the answer was judged");
  assert.deepEqual([sessionStats.judged, sessionStats.referenced], [judged, 1]);

  // the status bar's tooltip: "Referenced 1 of N (…)", utilization, refreshes per turn
  await page.mouse.move(600, 300);
  await statusItem().hover();
  const hover = page.locator(".monaco-hover, .workbench-hover", { hasText: "injected into this chat session" }).first();
  await hover.waitFor({ timeout: 20_000 });
  const tip = flat(await hover.innerText());
  const pct = Math.round((100 * 1) / judged);
  assert.ok(tip.includes(`Referenced 1 of ${judged} (${pct} %) · utilization `), tip);
  assert.match(tip, /utilization \d+ % · 0 refreshes per turn/, tip);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(OUT, "loop-status-tooltip.png") });
  await hover.screenshot({ path: join(OUT, "loop-status-tooltip-hover.png") });
  log(`tooltip: ${tip}`);

  // the manifest: the decision's row says referenced, the others not
  await page.mouse.move(600, 300);
  await statusItem().click();
  const manifest = flat(await rendered(/Nous manifest: in your own words[\s\S]*The model's reply referenced/));
  writeFileSync(join(OUT, "loop-manifest.txt"), manifest);
  assert.ok(manifest.includes(`The model's reply referenced 1 of the ${judged} injected ${judged === 1 ? "item" : "items"} (judged by nous/feedback)`), manifest);
  assert.match(manifest, new RegExp(`${decision.id.slice(0, 8)} \\d+ [\\d.]+ referenced `), manifest);
  assert.equal((manifest.match(/ unused /g) || []).length, judged - 1, manifest);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(OUT, "loop-manifest.png") });

  // nous stats on the same database counts it: the session, and its frame's answers
  const cli = statsFromCli("--session", answer.sessionId, "--by", "frame");
  assert.deepEqual([cli.judged, cli.referenced], [judged, 1]);
  const relevance = cli.metrics.find((m) => m.name === "contextRelevance");
  assert.equal(relevance.value, 1 / judged);
  const overhead = cli.metrics.find((m) => m.name === "overhead");
  assert.ok(overhead.value > 0, `the participant reported the conversation's tokens: ${JSON.stringify(overhead)}`);
  assert.deepEqual(cli.groups.map((g) => [g.referenced, g.judged]), [[1, judged]]);
  log(`nous stats --session ${answer.sessionId}: referenced ${cli.referenced} of ${cli.judged}; overhead ${overhead.basis}; by frame ${JSON.stringify(cli.groups.map((g) => g.key))}`);
});

// -- what the run left in the store (issue 26) -----------------------------------------------

const ASKED = [
  "how should the checkout code take payments?",
  "how are prices stored in the shop?",
  "use recall: where do card payments go",
  "which conventions apply to public functions?",
];

/** `nous recall` from the command line against the e2e's database: no chat session (any session
 * the run had is another one). */
function recallFromNewSession(query) {
  const out = execFileSync(PYTHON, ["-m", "nous", "--db", join(scratch, "memory.db"), "--workspace", workspace, "--json", "recall", query], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  return JSON.parse(out);
}

test("after the run the store holds no query-only turn outside its session and no test-model text", async () => {
  const memories = await nousListAll();
  const captured = memories.filter((m) => m.captured);
  log(`the store: ${memories.length} memories, ${captured.length} captured from chat: ${JSON.stringify(captured.map((m) => `${m.kind} [${m.tags.join(",")}] ${m.content.slice(0, 70)}`))}`);
  // no test-model text: the fake model's replies only said the injected memories again
  const leaked = memories.filter((m) => /FAKE (?:MODEL|AGENT)|TOOL RESULT|According to the project's records|The recall found this|Where we left off/.test(m.content));
  assert.deepEqual(leaked.map((m) => m.content), [], "a reply that restates the injected context is not kept");
  // no doubled label on a session note
  const doubled = memories.filter((m) => m.kind === "note" && /^(?:impl|dec|block|next):\s*(?:next step|next|decision|decided|done|blocked?)\s*:/i.test(m.content));
  assert.deepEqual(doubled.map((m) => m.content), []);
  // the tools' queries are no memories (the agent's nous_recall, the participant's tool loop)
  const queries = memories.filter((m) => /where do memories live and how are they searched|^how do we store memories/.test(m.content));
  assert.deepEqual(queries.map((m) => m.content), [], "a tool's query is not kept");
  // the questions asked in chat are kept for their own session's window only
  const asking = memories.filter((m) => m.tags.includes("asking"));
  for (const question of ASKED) {
    const turn = asking.find((m) => m.content === question);
    assert.ok(turn, `“${question}” is an asking turn: ${JSON.stringify(asking.map((m) => m.content))}`);
    assert.ok(turn.captured && /^chat:vscode-chat-[^#]+#\d+$/.test(turn.source), JSON.stringify(turn));
  }
  assert.ok(asking.every((m) => m.kind === "episode" && m.tags.includes("role:user")), JSON.stringify(asking));
  // …and never a candidate in another session: recalled from a new one, they are left out
  const askingIds = new Set(asking.map((m) => m.id));
  let droppedAsScope = 0;
  for (const question of ASKED) {
    const result = recallFromNewSession(question.replace(/^use recall:\s*/, ""));
    const items = result.sections.flatMap((section) => section.items);
    assert.deepEqual(items.filter((i) => askingIds.has(i.id)).map((i) => i.text), [], `recall “${question}” from a new session`);
    assert.ok(!result.text.includes(question), result.text);
    const dropped = result.dropped.filter((d) => askingIds.has(d.id));
    assert.ok(dropped.every((d) => d.reason === "scope"), JSON.stringify(dropped));
    droppedAsScope += dropped.length;
    log(`recall “${question}” from a new session: ${items.length} items, ${dropped.length} asking turns dropped as another session's`);
  }
  log(`asking turns: ${asking.length}; dropped as another session's question across ${ASKED.length} recalls: ${droppedAsScope}`);
});
