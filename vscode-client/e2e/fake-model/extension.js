// Test-only extension for the Nous end-to-end test. A fake chat model (vendor "nousfake") that
// appends every request it receives to <outDir>/fake-model.jsonl and answers as a model answering
// from the context it was given would: it says again the memories Nous injected ("According to the
// project's records: …"), with no test marker of its own that could leak into the store; asked to
// "use recall: QUERY" it emits a nous_recall tool call first and answers from its result; asked to
// "let's settle …" it settles a decision and leaves a next step (session continuity); asked "in your
// own words" it paraphrases one memory it was given (the feedback loop). Commands let
// the test call vscode.lm.invokeTool and read the Nous extension's API; a participant,
// @fakeagent, calls nous_context with its chat's tool invocation token (an agent-mode tool
// call). Never shipped with the extension.
"use strict";
const vscode = require("vscode");
const fs = require("fs");
const path = require("path");

function outDir() {
  return vscode.workspace.getConfiguration("nousE2e").get("outDir") || require("os").tmpdir();
}

function write(name, data) {
  fs.mkdirSync(outDir(), { recursive: true });
  fs.writeFileSync(path.join(outDir(), name), JSON.stringify(data, null, 2));
}

function partsOf(message) {
  const parts = Array.isArray(message.content) ? message.content : [message.content];
  return parts.map((part) => {
    if (typeof part === "string") return { type: "text", text: part };
    if (part instanceof vscode.LanguageModelTextPart) return { type: "text", text: part.value };
    if (part instanceof vscode.LanguageModelToolCallPart) return { type: "toolCall", name: part.name, callId: part.callId, input: part.input };
    if (part instanceof vscode.LanguageModelToolResultPart) {
      const text = (part.content || []).map((c) => (c && typeof c.value === "string" ? c.value : "")).join("");
      return { type: "toolResult", callId: part.callId, text };
    }
    return { type: "other", text: String(part && part.value !== undefined ? part.value : "") };
  });
}

function roleName(role) {
  return role === vscode.LanguageModelChatMessageRole.Assistant ? "assistant" : role === vscode.LanguageModelChatMessageRole.User ? "user" : String(role);
}

const SETTLED =
  "We decided to compute shipping fees by parcel weight, not a flat rate. " +
  "Next step: add a carrier_rates migration with the weight tiers.";

/** The memories a rendered Nous context holds (the lines of its fenced memory blocks, then its
 * project rules), as a model reads them: without bullets, headings in brackets, a record's title
 * before its dash, or a session note's tag. */
function memoryLines(text) {
  const memories = [];
  const ruleLines = [];
  let fenced = false;
  let rules = false;
  for (const line of text.split("\n")) {
    if (/^```memories\b/.test(line)) fenced = true;
    else if (/^```/.test(line)) fenced = false;
    else if (/^## /.test(line)) rules = /^## Project Rules\b/.test(line);
    else if ((fenced || rules) && /^\s*- /.test(line)) {
      let said = line.replace(/^\s*- /, "").replace(/^\((\w+)\)\s*/, "").replace(/^\[[^\]]*\]\s*/, "");
      const dash = said.indexOf(" — ");
      if (dash >= 0) said = said.slice(dash + 3);
      said = said.replace(/^(?:impl|dec|block|next):\s*/, "").trim();
      if (said) (fenced ? memories : ruleLines).push(/[.!?]$/.test(said) ? said : said + ".");
    }
  }
  return [...memories, ...ruleLines]; // what was recalled for the question first, then the rules
}

/** Asked "in your own words", the model cites one memory it was given as a model does: in its
 * own sentence, reusing the memory's names (the carrier, the parcel, the signature) but not its
 * wording. One paraphrase per memory the e2e's workspace holds. */
const PARAPHRASES = [
  [
    /Carrier webhooks are verified with an HMAC-SHA256 signature/,
    "We only let a carrier webhook change a parcel's status after its HMAC-SHA256 signature checks out.",
  ],
];

function capitalized(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const provider = {
  provideLanguageModelChatInformation() {
    return [
      {
        id: "nous-fake-echo",
        name: "Nous Fake Echo",
        family: "nous-fake",
        version: "1.0.0",
        tooltip: "Test-only echo model",
        detail: "test",
        maxInputTokens: 64000,
        maxOutputTokens: 4000,
        capabilities: { toolCalling: true, imageInput: false },
      },
    ];
  },
  async provideLanguageModelChatResponse(model, messages, options, progress) {
    const received = messages.map((m) => ({ role: roleName(m.role), parts: partsOf(m) }));
    const tools = (options.tools || []).map((t) => t.name);
    fs.mkdirSync(outDir(), { recursive: true });
    fs.appendFileSync(path.join(outDir(), "fake-model.jsonl"), JSON.stringify({ at: new Date().toISOString(), tools, messages: received }) + "\n");
    const lastUser = [...received].reverse().find((m) => m.role === "user");
    const lastText = lastUser ? lastUser.parts.filter((p) => p.type === "text").map((p) => p.text).join("") : "";
    const toolResults = received.flatMap((m) => m.parts.filter((p) => p.type === "toolResult"));
    const ask = /use recall:\s*(.+)$/i.exec(lastText);
    if (ask && toolResults.length === 0 && tools.includes("nous_recall")) {
      progress.report(new vscode.LanguageModelToolCallPart("fake-call-1", "nous_recall", { query: ask[1].trim() }));
      return;
    }
    if (/\bin your own words\b/i.test(lastText)) {
      // the reply refers to one injected memory, paraphrased (issue 27's end-to-end loop)
      const given = received[0] ? received[0].parts.map((p) => p.text || "").join("") : "";
      const found = PARAPHRASES.find(([re]) => memoryLines(given).some((line) => re.test(line)));
      progress.report(new vscode.LanguageModelTextPart(found ? found[1] : "I found nothing on this in the project's records, so I cannot say for sure."));
      return;
    }
    if (/\blet'?s settle\b/i.test(lastText)) {
      // session continuity: the model settles the decision and leaves a next step (no echo, so
      // the reply holds nothing but what was settled)
      progress.report(new vscode.LanguageModelTextPart(SETTLED));
      return;
    }
    // Otherwise the model answers from what it was given, in its own lead-in: a reply that only
    // says the memories again (Nous does not keep it: it would be a memory of a memory)
    const contextResult = received.flatMap((m) => m.parts).find((p) => p.type === "text" && /^Result of nous_context:/.test(p.text));
    if (contextResult) {
      // a new session opened with #nousContext: where the last session left off
      const notes = memoryLines(contextResult.text);
      progress.report(new vscode.LanguageModelTextPart(notes.length ? `Where we left off: ${notes.join(" ")}` : "There is nothing from an earlier session to pick up."));
      return;
    }
    if (toolResults.length) {
      const found = toolResults.flatMap((r) => memoryLines(r.text)).slice(0, 2);
      progress.report(new vscode.LanguageModelTextPart(found.length ? `The recall found this in the project's records: ${found.join(" ")}` : "The recall found nothing on this in the project's records."));
      return;
    }
    const first = received[0] ? received[0].parts.map((p) => p.text || "").join("") : "";
    const said = memoryLines(first).slice(0, 2);
    progress.report(new vscode.LanguageModelTextPart(said.length ? `According to the project's records: ${said.map(capitalized).join(" ")}` : "I found nothing on this in the project's records, so I cannot say for sure."));
  },
  async provideTokenCount(model, text) {
    const value = typeof text === "string" ? text : JSON.stringify(text);
    return Math.ceil(value.length / 4);
  },
};

function nousApi() {
  const ext = vscode.extensions.getExtension("nous.nous");
  return ext && ext.isActive ? ext.exports : undefined;
}

async function activate(context) {
  // another agent in the chat (not @nous): it calls nous_context with the chat's own tool
  // invocation token, as an agent-mode model's tool call does
  const agent = vscode.chat.createChatParticipant("nousE2e.agent", async (request, _chat, stream, token) => {
    try {
      const result = await vscode.lm.invokeTool(
        "nous_context",
        { input: { task: request.prompt }, toolInvocationToken: request.toolInvocationToken },
        token,
      );
      const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
      const fields = request.toolInvocationToken ? Object.keys(request.toolInvocationToken) : [];
      fs.appendFileSync(path.join(outDir(), "agent-tool.jsonl"), JSON.stringify({ ok: true, prompt: request.prompt, tokenFields: fields, text }) + "\n");
      stream.markdown(`FAKE AGENT: nous_context answered (${text.length} characters).`);
    } catch (err) {
      fs.appendFileSync(path.join(outDir(), "agent-tool.jsonl"), JSON.stringify({ ok: false, error: String(err && err.stack ? err.stack : err) }) + "\n");
      stream.markdown("FAKE AGENT: nous_context failed.");
    }
  });
  context.subscriptions.push(
    agent,
    vscode.lm.registerLanguageModelChatProvider("nousfake", provider),
    vscode.commands.registerCommand("nousE2e.openChat", async () => {
      await vscode.commands.executeCommand("workbench.action.chat.open", { modelSelector: { vendor: "nousfake" } });
    }),
    vscode.commands.registerCommand("nousE2e.newChat", async () => {
      await vscode.commands.executeCommand("workbench.action.chat.newChat");
      await vscode.commands.executeCommand("workbench.action.chat.open", { modelSelector: { vendor: "nousfake" } });
    }),
    vscode.commands.registerCommand("nousE2e.startupProbe", async () => {
      // what a new session's startup context holds, straight from the daemon (a fresh session id,
      // startup mode: nothing is stored)
      try {
        const api = nousApi();
        const result = await api.request("nous/context", { input: "", mode: "startup", sessionId: `e2e-probe-${Date.now()}` });
        const items = result.sections.flatMap((s) => s.items.map((i) => ({ layer: s.layer, kind: i.kind, text: i.text, source: i.source })));
        write("startup-probe.json", { ok: true, text: result.text, items });
      } catch (err) {
        write("startup-probe.json", { ok: false, error: String(err && err.stack ? err.stack : err) });
      }
    }),
    vscode.commands.registerCommand("nousE2e.invokeRecall", async () => {
      try {
        const result = await vscode.lm.invokeTool("nous_recall", {
          input: { query: "where do memories live and how are they searched?" },
          toolInvocationToken: undefined,
          tokenizationOptions: { tokenBudget: 120, countTokens: async (t) => Math.ceil(String(t).length / 4) },
        });
        const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
        write("invoke-recall.json", { ok: true, text });
      } catch (err) {
        write("invoke-recall.json", { ok: false, error: String(err && err.stack ? err.stack : err) });
      }
    }),
    vscode.commands.registerCommand("nousE2e.invokeContext", async () => {
      // an agent-mode model's #nousContext call (no chat token here: the window's session)
      try {
        const result = await vscode.lm.invokeTool("nous_context", {
          input: { task: "Move the invoice export to the nightly job; we decided to drop the CSV format. Next step: add the nightly export tests." },
          toolInvocationToken: undefined,
        });
        const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
        write("invoke-context.json", { ok: true, text });
      } catch (err) {
        write("invoke-context.json", { ok: false, error: String(err && err.stack ? err.stack : err) });
      }
    }),
    vscode.commands.registerCommand("nousE2e.setBarePython", async () => {
      const python = process.env.NOUS_E2E_BARE_PYTHON || "/usr/bin/python3";
      await vscode.workspace.getConfiguration("nous").update("python", python, vscode.ConfigurationTarget.Global);
      write("set-python.json", { python });
    }),
    vscode.commands.registerCommand("nousE2e.browserState", async () => {
      const api = nousApi();
      if (!api) return write("browser.json", { error: "nous is not active" });
      const list = await api.request("nous/list", { limit: 500 });
      write("browser.json", { ...api.memoryBrowser(), memories: list.items });
    }),
    vscode.commands.registerCommand("nousE2e.hideSecondarySideBar", async () => {
      await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar");
      write("layout.json", { done: true });
    }),
    vscode.commands.registerCommand("nousE2e.dumpState", async () => {
      const api = nousApi();
      let status;
      try {
        status = api ? await api.request("nous/status", {}) : undefined;
      } catch (err) {
        status = { error: String(err) };
      }
      write("state.json", {
        nousActive: !!api,
        running: api ? api.isRunning() : false,
        lastBudget: api ? api.lastBudget() : undefined,
        injected: api && api.injected ? api.injected() : undefined,
        statusText: api && api.statusText ? api.statusText() : undefined,
        manifests: api && api.manifests ? api.manifests() : undefined,
        sessionStats: api && api.sessionStats ? api.sessionStats() : undefined,
        interpreter: api && api.interpreter ? api.interpreter() : undefined,
        status,
        tools: vscode.lm.tools.map((t) => t.name),
      });
    }),
  );
}

module.exports = { activate, deactivate() {} };
