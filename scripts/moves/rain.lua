-- Rain moves: the cloud (the fluid's emitter) wanders over the tank on a
-- slow figure that rarely repeats, its shower swelling on the downbeat of
-- each bar and pausing for a bar every few phrases; a wind leans the rain
-- and turns with it. Where the rain lands the forest grows (forest.rain).

local tilt = require("moves.tilt")
local rain = {}

function rain.setup()
  persist.dry = persist.dry or false
end

function rain.update(dt)
  local t = sylva.time
  -- The cloud keeps within the tank, whatever its size, just under its lid.
  local tank = sylva.get("fluid.container")
  local x = tank[1] * (0.5 + 0.38 * math.sin(t * 0.21) * math.cos(t * 0.057))
  local z = tank[3] * (0.5 + 0.38 * math.sin(t * 0.13 + 1.7))
  sylva.set("fluid.emitter", { x, tank[2] * 0.93, z })
  -- The wind leans gravity, so over a shallow pond it blows as gently as
  -- the water's depth allows (moves/tilt.lua).
  local gentle = tilt(tank)
  local wind = gentle * 1.5 * math.sin(t * 0.09)
  sylva.set("fluid.gravity", { wind, -9.81, gentle * 0.6 * math.cos(t * 0.11) })
  local swell = sylva.beat % 4 < 1 and (1 - sylva.beat_phase) or 0
  -- A cloud half the tank wide, so it rains over the ground, not in a
  -- column.
  local radius = persist.dry and 0 or tank[1] * (0.5 + 0.2 * swell)
  sylva.set("fluid.emitter_radius", radius)
end

function rain.beat(n)
  -- Every fifth phrase holds its breath for a bar.
  persist.dry = (n // 16) % 5 == 4 and n % 16 < 4
end

return rain
