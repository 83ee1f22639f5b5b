-- Headless Neovim as a real LSP client of `nous serve` (Neovim 0.7: vim.lsp.start_client).
-- Inputs come from the environment; the results are written as JSON to NOUS_NVIM_OUT.
local env = vim.env
local out = io.open(env.NOUS_NVIM_OUT, "w")
local function finish(result)
  out:write(vim.fn.json_encode(result))
  out:close()
  vim.cmd("qa!")
end

local notes = {}
local client_id = vim.lsp.start_client({
  name = "nous",
  cmd = { env.NOUS_PYTHON, "-m", "nous", "serve", "--stdio" },
  cmd_env = { NOUS_DB = env.NOUS_DB, PYTHONPATH = env.PYTHONPATH },
  root_dir = env.NOUS_WS,
  workspace_folders = { { uri = vim.uri_from_fname(env.NOUS_WS), name = "nvim" } },
  init_options = { watch = false },
  handlers = {
    ["nous/budget"] = function(_, params) table.insert(notes, { method = "nous/budget", params = params }) end,
    ["nous/indexed"] = function(_, params) table.insert(notes, { method = "nous/indexed", params = params }) end,
  },
})
if not client_id then
  finish({ error = "start_client failed" })
  return
end
local client = vim.lsp.get_client_by_id(client_id)
if not vim.wait(30000, function() return client.initialized end, 50) then
  finish({ error = "not initialized in 30 s" })
  return
end

local results = {}
local function call(method, params)
  local answer, err = client.request_sync(method, params, 30000, 0)
  if not answer then
    return { err = tostring(err) }
  end
  return { result = answer.result, err = answer.err }
end
results.remember = call("nous/remember", {
  kind = "decision",
  content = "Neovim users get the same memories: we chose SQLite WAL for the store",
})
-- the gate admits only what the question is about: ask in words the memory shares
results.context = call("nous/context", { input = "what did we choose for the memory store?", mode = "turn", sessionId = "nvim" })
results.recall = call("nous/recall", { query = "SQLite WAL store", sessionId = "nvim" })
results.bad = call("nous/recall", { query = 42 })
vim.wait(5000, function() return #notes >= 2 end, 50)
results.notes = notes
client.stop()
vim.wait(3000, function() return client.is_stopped() end, 50)
finish(results)
