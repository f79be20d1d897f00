-- Makes a module of moves (setup, update, beat) the script's own
-- handlers: `require("moves.play")(require("moves.fluid"))` is a whole
-- preset script.

return function(moves)
  function setup()
    if moves.setup then moves.setup() end
  end

  function update(dt)
    if moves.update then moves.update(dt) end
  end

  function on_beat(n)
    if moves.beat then moves.beat(n) end
  end
end
