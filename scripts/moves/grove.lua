-- A walk into the grove and out again: the camera sinks from over the
-- forest to among the trees, where the nearest show the crowns the colony
-- grew for them, and rises again, a breath of a little over two minutes
-- that the orbit's turn never lets repeat the same view.

local grove = {}

local BREATH = 130

-- The camera's distance at the walk's nearest: among the trees of a grown
-- grove; a script whose trees stand closer keeps further out.
grove.nearest = 0.12

function grove.update(dt)
  local near = 0.5 - 0.5 * math.cos(sylva.time * 2 * math.pi / BREATH)
  sylva.set("forest.camera_distance", 0.6 - (0.6 - grove.nearest) * near ^ 1.5)
  sylva.set("forest.camera_pitch", 24 - 17 * near)
end

return grove
