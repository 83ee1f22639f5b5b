import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { installCommand, pickInterpreter, probeOutcome, serveArgs } from "../src/interpreter";
import { initializationOptions, MACHINE_ONLY, recallBudget, SETTING_KEYS, trustedReader, userValue, type Inspected, type SettingKey } from "../src/settings";

const root = join(__dirname, "..", "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  contributes: { configuration: { properties: Record<string, { default: unknown }> } };
};
const properties = manifest.contributes.configuration.properties;

test("every nous.* setting in package.json is sent, and nothing else", () => {
  const declared = Object.keys(properties).map((k) => k.replace(/^nous\./, "")).sort();
  assert.deepEqual([...SETTING_KEYS].sort(), declared);
});

test("settings become camelCase initializationOptions; empty strings mean the daemon's default", () => {
  const values: Partial<Record<SettingKey, unknown>> = {
    python: "",
    db: " /tmp/m.db ",
    encoding: "cl100k_base",
    recallBudget: 800,
    sessionCap: 4000,
    harvest: false,
    watch: true,
    capture: false,
    startupBudget: Number.NaN,
    embeddingModel: 42,
  };
  const options = initializationOptions((key) => values[key]);
  assert.deepEqual(options, {
    db: "/tmp/m.db",
    encoding: "cl100k_base",
    recallBudget: 800,
    sessionCap: 4000,
    harvest: false,
    watch: true,
    capture: false,
  });
});

test("package.json defaults all pass through", () => {
  const options = initializationOptions((key) => properties[`nous.${key}`]?.default);
  assert.deepEqual(Object.keys(options).sort(), [
    "capture",
    "embeddingModel",
    "encoding",
    "harvest",
    "maxRecallsPerSession",
    "recallBudget",
    "sessionCap",
    "startupBudget",
    "teamTimeoutMs",
    "watch",
  ]);
});

test("the interpreter comes from the setting, then the Python extension, then python3", () => {
  assert.deepEqual(pickInterpreter("/opt/py/bin/python", "/venv/bin/python"), { path: "/opt/py/bin/python", source: "setting" });
  assert.deepEqual(pickInterpreter("  ", "/venv/bin/python"), { path: "/venv/bin/python", source: "python-extension" });
  assert.deepEqual(pickInterpreter(undefined, undefined), { path: "python3", source: "path" });
});

test("the install command names the interpreter exactly, quoted when needed", () => {
  assert.equal(
    installCommand("/usr/bin/python3", "/ext/bundled/wheels"),
    "/usr/bin/python3 -m pip install --no-index --find-links /ext/bundled/wheels nous-context",
  );
  assert.equal(
    installCommand("/My Envs/py", "/My Ext/wheels"),
    '"/My Envs/py" -m pip install --no-index --find-links "/My Ext/wheels" nous-context',
  );
  assert.equal(installCommand("/usr/bin/python3", undefined), "/usr/bin/python3 -m pip install dist/nous_context-*.whl");
  assert.doesNotMatch(installCommand("python3", undefined), /install nous\b(?!-)/);
  assert.deepEqual(serveArgs(), ["-m", "nous", "serve"]);
});

test("the probe tells a missing interpreter from a missing package", () => {
  assert.equal(probeOutcome(null, "ENOENT"), "no-python");
  assert.equal(probeOutcome(3, undefined), "no-package");
  assert.equal(probeOutcome(0, undefined), "ok");
  assert.equal(probeOutcome(1, undefined), "error");
});

test("a smaller token budget from the caller shrinks the recall budget, a larger one does not", () => {
  assert.equal(recallBudget(500, undefined), 500);
  assert.equal(recallBudget(500, 120.7), 120);
  assert.equal(recallBudget(500, 4000), 500);
  assert.equal(recallBudget(500, 0), 500);
});

test("nous.python, nous.db and nous.teamStore are machine-scoped: a workspace cannot choose what runs or where memories go", () => {
  for (const key of MACHINE_ONLY) {
    const scope = (properties[`nous.${key}`] as { scope?: string } | undefined)?.scope;
    assert.ok(scope === "machine" || scope === "application", `nous.${key} has scope ${scope}`);
  }
  assert.deepEqual([...MACHINE_ONLY].sort(), ["db", "python", "teamStore"]);
});

test("machine-only settings are read from user settings, never from a workspace or folder", () => {
  const inspected: Record<string, Inspected> = {
    python: { defaultValue: "", globalValue: "/home/me/.venv/bin/python", workspaceValue: "./evil.sh", workspaceFolderValue: "./evil.sh" },
    db: { defaultValue: "", workspaceValue: "./notes/memory.db" },
  };
  const merged: Record<string, unknown> = { python: "./evil.sh", db: "./notes/memory.db", recallBudget: 900 };
  const read = trustedReader({ get: (key) => merged[key], inspect: (key) => inspected[key] });
  assert.equal(read("python"), "/home/me/.venv/bin/python");
  assert.equal(read("db"), "");
  assert.equal(read("recallBudget"), 900); // other settings still follow the workspace
  assert.deepEqual(pickInterpreter(read("python"), undefined), { path: "/home/me/.venv/bin/python", source: "setting" });
  assert.deepEqual(initializationOptions(read), { python: "/home/me/.venv/bin/python", recallBudget: 900 });
  assert.equal(userValue(undefined), undefined);
  assert.equal(userValue({ workspaceValue: "x" }), undefined);
});
