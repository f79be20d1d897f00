-- The default show's choreography: one script for every entry of the
-- playlist `default` (presets/playlists/default.toml). Each preset that
-- comes on stage is danced by the moves of its layers from scripts/moves/,
-- all at once: the figure dances while branches fill it and the shower
-- wanders over it, the colony's growth surges with the beat, the rain
-- feeds the forest, the camera of a shared scene breathes and swings to a
-- new side every eight bars. Save this file, or a move, while the show
-- runs to change it on the next frame.

local colony, fluid, skinned = require("moves.colony"), require("moves.fluid"), require("moves.skinned")
local forest, rain, camera = require("moves.forest"), require("moves.rain"), require("moves.scene")
local grove = require("moves.grove")

local scenes = {
  world = { skinned, colony, rain, camera },
  downpour = { skinned, rain, camera },
  forest = { forest, grove },
  rain = { rain },
  skinned = { skinned, camera },
  kaleidoscope = { fluid, colony },
  colony = { colony },
  fluid = { fluid },
  forest_rivers = { forest },
  colony_picture = { colony },
}

-- Every move of the preset on stage (kept in persist, so a saved script
-- picks up where the old one was) runs `step`.
local function each(step, ...)
  for _, moves in ipairs(scenes[persist.scene or ""] or {}) do
    if moves[step] then moves[step](...) end
  end
end

function setup()
  each("setup")
end

function on_preset(name)
  persist.scene = name
  sylva.log("default show: " .. name)
  setup()
end

function update(dt)
  each("update", dt)
end

function on_beat(n)
  each("beat", n)
end
