-- Colony moves: growth surges on every beat and eases off through it;
-- the reach of the attractions (influence distance) breathes over eight
-- bars; the palette turns every phrase. With colony.regrow on, the tree
-- fades and grows anew every colony.regrow_seconds, so it never settles.

local colony = {}
local palettes = { "aurora", "ember", "ice", "moss" }

function colony.setup()
  persist.colony_phrase = persist.colony_phrase or 0
end

function colony.update(dt)
  local pulse = (1 - sylva.beat_phase) ^ 3
  sylva.set("colony.growth_speed", 1.5 + 6 * pulse)
  local breath = math.sin(sylva.beat * math.pi / 16)
  sylva.set("colony.influence_distance", 3.2 + 1.6 * breath)
end

function colony.beat(n)
  if n % 16 == 0 then
    persist.colony_phrase = persist.colony_phrase + 1
    sylva.set("colony.palette", palettes[persist.colony_phrase % #palettes + 1])
  end
end

return colony
