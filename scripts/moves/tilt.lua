-- How far a move may lean the water's gravity: a tilt of the surface by
-- about as much as the water is deep over the tank's length (a tank 1.6 m
-- long filled 0.6 m deep: the whole lean); a long shallow pool is leaned
-- more gently, so its waves run along it instead of piling all the water
-- at one end. Shared by the moves that rock the tank or blow a wind;
-- the water's depth in metres comes second.

return function(tank)
  local deep = tank[2] * (sylva.get("fluid.depth") or 0.6)
  return math.min(1, deep / tank[1] / 0.375), deep
end
