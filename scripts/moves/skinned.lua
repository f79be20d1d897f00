-- Skinned moves: the figure dances, idles (the built-in figure sways)
-- and walks in turn (the woman of Dancer.glb waves, walks, runs, spars
-- and rolls), a new move
-- every sixteen beats with a crossfade between them, and the branches
-- change colour with each phrase. The growth itself fades and grows
-- again every half minute (skinned.regrow).

local skinned = {}
-- The robot's and the built-in figure's clips share these names.
local dances = { "Dance", "Idle", "Dance", "Walking" }
local moves_of = {
  ["Dancer.glb"] = { "Wave", "Walk", "Run", "Punch_Left", "Kick_Right", "Roll", "Idle_Neutral", "Punch_Right" },
}
local palettes = { "ember", "ice", "aurora", "moss" }

function skinned.setup()
  persist.skinned_phrase = persist.skinned_phrase or 0
end

function skinned.beat(n)
  if n % 16 ~= 0 then
    return
  end
  persist.skinned_phrase = persist.skinned_phrase + 1
  local figure = sylva.layer("skinned")
  local moves = moves_of[figure.model] or dances
  figure:play(moves[persist.skinned_phrase % #moves + 1], 1.5)
  figure.palette = palettes[persist.skinned_phrase % #palettes + 1]
end

return skinned
