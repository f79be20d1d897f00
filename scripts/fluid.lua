-- The fluid preset's choreography: the tank is rocked so the water never
-- settles. Gravity leans one way and back on a slow swell (two periods
-- that rarely line up, so no two minutes look alike), and every eight
-- beats a paddle sweeps through the water from one end to the other.
-- Save this file while the show runs to change it on the next frame.

local swell = 9      -- seconds per rock
local sweep = 2.5    -- seconds a paddle stroke takes

function setup()
  persist.stroke = persist.stroke or 0
end

function update(dt)
  local t = sylva.time
  local lean = 3.2 * math.sin(t * 2 * math.pi / swell) + 1.4 * math.sin(t * 0.37)
  local roll = 1.2 * math.sin(t * 0.23)
  sylva.set("fluid.gravity", { lean, -9.81, roll })
  local since = t - (persist.started or -100)
  if since < sweep then
    local across = since / sweep
    local x = persist.stroke % 2 == 0 and 0.1 + 1.4 * across or 1.5 - 1.4 * across
    sylva.set("fluid.point1", { x, 0.2, 0.4 })
    sylva.set("fluid.point1_radius", 0.22 * math.sin(math.pi * across))
  else
    sylva.set("fluid.point1_radius", 0)
  end
end

function on_beat(n)
  if n % 8 == 0 then
    persist.stroke = persist.stroke + 1
    persist.started = sylva.time
  end
end
