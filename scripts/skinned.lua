-- The skinned preset's choreography: the figure dances, sways and walks
-- in turn, a new move every sixteen beats with a crossfade between them,
-- and the branches change colour with each phrase. The growth itself
-- fades and grows again every half minute (skinned.regrow).
-- Save this file while the show runs to change it on the next frame.

local moves = { "Dance", "Sway", "Dance", "Walk" }
local palettes = { "ember", "ice", "aurora", "moss" }

function setup()
  persist.phrase = persist.phrase or 0
end

function on_beat(n)
  if n % 16 ~= 0 then
    return
  end
  persist.phrase = persist.phrase + 1
  local figure = sylva.layer("skinned")
  figure:play(moves[persist.phrase % #moves + 1], 1.5)
  figure.palette = palettes[persist.phrase % #palettes + 1]
end
