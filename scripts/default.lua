-- The default show's choreography: one script for every entry of the
-- playlist `default` (presets/playlists/default.toml). Each preset that
-- comes on stage is danced by its moves from scripts/moves/: the colony's
-- growth surges with the beat and its reach breathes, the fluid is rocked,
-- swept and poured, the figure dances while branches fill it, the forest
-- grows and is carved by a wandering brush. Save this file, or a move,
-- while the show runs to change it on the next frame.

local scenes = {
  colony = require("moves.colony"),
  fluid = require("moves.fluid"),
  skinned = require("moves.skinned"),
  forest = require("moves.forest"),
}

-- The scene on stage, kept in persist so a saved script picks up where
-- the old one was.
local function scene()
  return scenes[persist.scene or ""]
end

function setup()
  local moves = scene()
  if moves and moves.setup then moves.setup() end
end

function on_preset(name)
  persist.scene = name
  sylva.log("default show: " .. name)
  setup()
end

function update(dt)
  local moves = scene()
  if moves and moves.update then moves.update(dt) end
end

function on_beat(n)
  local moves = scene()
  if moves and moves.beat then moves.beat(n) end
end
