-- The downpour's choreography: the figure's moves, the wandering shower
-- and the scene camera's, all at once (scripts/moves/). Save this file,
-- or a move, while the show runs to change it.

local parts = { require("moves.skinned"), require("moves.rain"), require("moves.scene") }

function setup()
  for _, moves in ipairs(parts) do
    if moves.setup then moves.setup() end
  end
end

function update(dt)
  for _, moves in ipairs(parts) do
    if moves.update then moves.update(dt) end
  end
end

function on_beat(n)
  for _, moves in ipairs(parts) do
    if moves.beat then moves.beat(n) end
  end
end
