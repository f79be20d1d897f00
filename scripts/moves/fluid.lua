-- Fluid moves: the tank is rocked so the water never settles. Gravity
-- leans one way and back on a slow swell (two periods that rarely line
-- up, so no two minutes look alike); every eight beats a paddle sweeps
-- through the water from one end to the other; every other phrase the
-- tank drains at one end and pours back in from above at the other.

local tilt = require("moves.tilt")
local fluid = {}
local swell = 9      -- seconds per rock
local stroke = 2.5   -- seconds a paddle stroke takes, at the least
local paddle = 3.0   -- m/s at the most: no faster than the waves the
                     -- large step is made for, however long the tank

function fluid.setup()
  persist.stroke = persist.stroke or 0
  persist.started = nil
end

function fluid.update(dt)
  local t = sylva.time
  local tank = sylva.get("fluid.container") or { 1.6, 1.0, 0.8 }
  -- The rocking leans as far as the water's depth allows (moves/tilt.lua).
  local gentle, deep = tilt(tank)
  local lean = gentle * (3.2 * math.sin(t * 2 * math.pi / swell) + 1.4 * math.sin(t * 0.37))
  local roll = gentle * 1.2 * math.sin(t * 0.23)
  -- Gravity leans harder on the downbeat of each bar.
  local kick = sylva.beat % 4 < 1 and gentle * 1.6 * (1 - sylva.beat_phase) or 0
  sylva.set("fluid.gravity", { lean * (1 + kick * 0.3), -9.81 - kick, roll })
  local since = t - (persist.started or -100)
  local sweep = math.max(stroke, 0.88 * tank[1] / paddle)
  if since < sweep then
    -- The paddle spans the tank whatever its size: from one end to the
    -- other at a fifth of its height, half-way across, as wide as a
    -- seventh of its length or three fifths of the water's depth.
    local across = since / sweep
    local from, to = 0.06 * tank[1], 0.94 * tank[1]
    local x = persist.stroke % 2 == 0 and from + (to - from) * across or to - (to - from) * across
    sylva.set("fluid.point1", { x, 0.2 * tank[2], 0.5 * tank[3] })
    local reach = math.min(0.14 * tank[1], 0.6 * deep)
    sylva.set("fluid.point1_radius", reach * math.sin(math.pi * across))
  else
    sylva.set("fluid.point1_radius", 0)
  end
end

function fluid.beat(n)
  if n % 8 == 0 then
    persist.stroke = persist.stroke + 1
    persist.started = sylva.time
  end
  if n % 16 == 0 then
    local pouring = (n // 16) % 2 == 1
    -- The pour and the drain grow with the tank (0.08 and 0.12 m in a
    -- 1.6 m tank).
    local tank = sylva.get("fluid.container") or { 1.6, 1.0, 0.8 }
    sylva.set("fluid.emitter", { 0.12 * tank[1], 0.9 * tank[2], 0.5 * tank[3] })
    sylva.set("fluid.sink", { 0.94 * tank[1], 0.05 * tank[2], 0.5 * tank[3] })
    sylva.ramp("fluid.emitter_radius", pouring and 0.05 * tank[1] or 0, 1, "smooth")
    sylva.ramp("fluid.sink_radius", pouring and 0.075 * tank[1] or 0, 1, "smooth")
  end
end

return fluid
