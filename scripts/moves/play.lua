-- Makes modules of moves (setup, update, beat) the script's own handlers,
-- each module's in turn: `require("moves.play")(require("moves.fluid"))`
-- is a whole preset script, and so is a call with several modules.

return function(...)
  local parts = { ... }
  local function each(step, ...)
    for _, moves in ipairs(parts) do
      if moves[step] then moves[step](...) end
    end
  end

  function setup()
    each("setup")
  end

  function update(dt)
    each("update", dt)
  end

  function on_beat(n)
    each("beat", n)
  end
end
