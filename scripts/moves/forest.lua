-- Forest moves: a brush wanders over the map on a slow loop that never
-- quite repeats, clearing glades in the lower layers for sixteen beats
-- and replanting for the next sixteen, so the forest keeps opening and
-- closing like weather over the hour.

local forest = {}

function forest.setup()
  sylva.set("forest.brush", true)
  sylva.set("forest.brush_radius", 22)
end

function forest.update(dt)
  local t = sylva.time
  local x = 0.5 + 0.36 * math.sin(t * 0.031)
  local y = 0.5 + 0.36 * math.sin(t * 0.047 + 1.3)
  sylva.set("forest.brush_at", { x, y, 0 })
end

function forest.beat(n)
  if n % 16 ~= 0 then
    return
  end
  local phrase = n // 16
  sylva.set("forest.brush_value", phrase % 2 == 0 and 0.0 or 1.0)
  sylva.set("forest.brush_map", phrase % 4 < 2 and 0 or 1)
end

return forest
