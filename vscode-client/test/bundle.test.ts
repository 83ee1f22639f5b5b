import assert from "node:assert/strict";
import { test } from "node:test";
import {
  baseCandidates,
  envDir,
  installArgs,
  judgeBase,
  missingPythonMessage,
  offlinePipEnv,
  parseBundle,
  stamp,
  venvPython,
} from "../src/bundle";

const bundle = parseBundle(
  "/ext/bundled/wheels",
  JSON.stringify({ package: "nous-context", version: "0.1.0", target: "linux-x64", pythons: "3.11 3.12" }),
)!;

test("bundle.json written by scripts/package is read; anything else is no bundle", () => {
  assert.deepEqual(bundle, {
    dir: "/ext/bundled/wheels", package: "nous-context", version: "0.1.0", target: "linux-x64", pythons: ["3.11", "3.12"],
  });
  assert.equal(parseBundle("/x", "not json"), undefined);
  assert.equal(parseBundle("/x", JSON.stringify({ package: "nous-context", version: "0.1.0", target: "linux-x64", pythons: "" })), undefined);
  assert.equal(parseBundle("/x", JSON.stringify({ version: 1 })), undefined);
});

test("the private environment is per bundle version and target, with the platform's interpreter path", () => {
  assert.equal(envDir("/store", bundle), "/store/server-0.1.0-linux-x64");
  assert.equal(venvPython("/store/env", "linux"), "/store/env/bin/python");
  assert.match(venvPython("/store/env", "win32"), /Scripts[\\/]python\.exe$/);
  assert.notEqual(stamp(bundle, ["a.whl", "b.whl"]), stamp(bundle, ["a.whl", "c.whl"]));
  assert.equal(stamp(bundle, ["b.whl", "a.whl"]), stamp(bundle, ["a.whl", "b.whl"]));
});

test("a base Python must be 3.11+ and one the bundled binary wheels are built for", () => {
  assert.equal(judgeBase("3.11", bundle), "fits");
  assert.equal(judgeBase("3.12\n", bundle), "fits");
  assert.equal(judgeBase("3.13", bundle), "no-wheels");
  assert.equal(judgeBase("3.10", bundle), "too-old");
  assert.equal(judgeBase("2.7", bundle), "too-old");
  assert.equal(judgeBase("", bundle), "too-old");
  assert.deepEqual(baseCandidates("/env/bin/python", bundle, "linux"), ["/env/bin/python", "python3.11", "python3.12", "python3", "python"]);
  assert.deepEqual(baseCandidates(undefined, bundle, "win32"), ["python", "python3", "py"]);
});

test("pip installs offline: only the bundled wheels, no index, no machine configuration", () => {
  const args = installArgs(bundle);
  assert.deepEqual(args.slice(0, 6), ["-m", "pip", "install", "--no-index", "--find-links", "/ext/bundled/wheels"]);
  assert.equal(args.at(-1), "nous-context==0.1.0");
  const env = offlinePipEnv({ PATH: "/bin", PIP_INDEX_URL: "https://example.invalid", PIP_FIND_LINKS: "/opt/wheels", PYTHONPATH: "/x" }, "/dev/null");
  assert.deepEqual(env, { PATH: "/bin", PIP_CONFIG_FILE: "/dev/null", PIP_NO_INDEX: "1", PIP_DISABLE_PIP_VERSION_CHECK: "1" });
});

test("without a usable Python the message names what is missing and what was tried", () => {
  const message = missingPythonMessage(bundle, [{ python: "python3", found: "Python 3.9" }]);
  assert.match(message, /needs Python 3\.11 or 3\.12 with the venv module/);
  assert.match(message, /python3 \(Python 3\.9\)/);
  assert.match(message, /nous\.python/);
});
