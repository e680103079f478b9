-- Drives a headless Neovim for tests/neovim.rs, after the config of
-- docs/editors.md was loaded as init.lua. It reads the spec (files and
-- positions, JSON) from $ARRAYFLOW_NVIM_SPEC and writes what it observed,
-- JSON, to $ARRAYFLOW_NVIM_OUT; the Rust test asserts on that. Every wait is
-- bounded; a failed step records why and the script still writes and quits.
-- Written for Neovim 0.7 to 0.11: no API newer than 0.7 unless guarded.

local spec = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("ARRAYFLOW_NVIM_SPEC")), "\n"))
local out = { version = tostring(vim.version().major) .. "." .. tostring(vim.version().minor), steps = {} }
local WAIT = spec.wait_ms

local function attached(buf)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf })
    or vim.lsp.buf_get_clients(buf)
  for _, c in pairs(clients) do
    if c.name == "arrayflow" then
      return true
    end
  end
  return false
end

local function diagnostics(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, { line = d.lnum, severity = d.severity, message = d.message })
  end
  return list
end

local function request(buf, method, params)
  local replies, err = vim.lsp.buf_request_sync(buf, method, params, WAIT)
  if not replies then
    return nil, "no reply to " .. method .. ": " .. tostring(err)
  end
  for _, r in pairs(replies) do
    if r.err then
      return nil, method .. ": " .. vim.inspect(r.err)
    end
    return r.result
  end
  return nil, "no server answered " .. method
end

local function at(buf, pos)
  return { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = pos[1], character = pos[2] } }
end

-- One file: open, wait for the server and its diagnostics and lenses, hover
-- and definition at the spec's position, the code actions.
local function session(file)
  local o = { file = file.path }
  vim.cmd("edit " .. vim.fn.fnameescape(file.path))
  local buf = vim.api.nvim_get_current_buf()
  o.filetype = vim.bo[buf].filetype
  o.attached = vim.wait(WAIT, function() return attached(buf) end, 20)
  if not o.attached then
    return o, buf
  end
  vim.wait(WAIT, function() return #vim.diagnostic.get(buf) >= file.min_diagnostics end, 20)
  o.diagnostics = diagnostics(buf)
  -- No refresh here: the config's own refresh must bring the lenses.
  vim.wait(WAIT, function() return #vim.lsp.codelens.get(buf) > 0 end, 20)
  o.lenses = {}
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(o.lenses, { line = l.range.start.line, title = l.command and l.command.title or "" })
  end
  local hover, herr = request(buf, "textDocument/hover", at(buf, file.hover))
  o.hover = hover and hover.contents and hover.contents.value or herr
  local def, derr = request(buf, "textDocument/definition", at(buf, file.definition))
  o.definition = {}
  if def then
    for _, loc in ipairs(def) do
      table.insert(o.definition, loc.range.start.line)
    end
  else
    o.definition_error = derr
  end
  local range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }
  local actions, aerr = request(buf, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = range,
    context = { diagnostics = {} },
  })
  o.actions = {}
  for _, a in ipairs(actions or {}) do
    table.insert(o.actions, a.title)
  end
  o.actions_error = aerr
  return o, buf, actions
end

local ok, err = pcall(function()
  local loop, buf, actions = session(spec.loop)
  table.insert(out.steps, loop)
  if not loop.attached then
    return
  end
  -- The code action that rewrites the file, resolved then applied as the
  -- client applies it.
  for _, a in ipairs(actions or {}) do
    if a.title == spec.apply_title then
      local resolved, rerr = request(buf, "codeAction/resolve", a)
      if resolved and resolved.edit then
        vim.lsp.util.apply_workspace_edit(resolved.edit, "utf-16")
        loop.applied = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
      else
        loop.apply_error = rerr or "no edit"
      end
    end
  end
  -- An edit that makes an error: the server must publish it.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, spec.broken_lines)
  loop.error_seen = vim.wait(WAIT, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.severity == vim.diagnostic.severity.ERROR then
        return true
      end
    end
    return false
  end, 20)
  loop.after_edit = diagnostics(buf)

  local c = session(spec.c)
  table.insert(out.steps, c)
end)
if not ok then
  out.error = tostring(err)
end
vim.fn.writefile({ vim.fn.json_encode(out) }, os.getenv("ARRAYFLOW_NVIM_OUT"))
vim.cmd("qall!")
