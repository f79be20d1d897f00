-- The skinned preset's choreography: the moves in scripts/moves/skinned.lua, which
-- the default show (scripts/default.lua) plays too. Save either file
-- while the show runs to change it on the next frame.

local moves = require("moves.skinned")

function setup()
  if moves.setup then moves.setup() end
end

function update(dt)
  if moves.update then moves.update(dt) end
end

function on_beat(n)
  if moves.beat then moves.beat(n) end
end
