-- Scene camera moves for presets whose layers share one scene: the camera
-- breathes in and out (a dolly over eight bars), rises and sinks, and every
-- eight bars swings to a new side of the stage (its smoothing makes the
-- swing a quick glide, never a jump that flings the water). The key light
-- swings most of the way round the stage and back every two minutes,
-- dipping towards a dusk and climbing back, so the figure's shadow turns
-- and stretches.

local scene = {}

-- Each side's distance is a share of the preset's own (a lone figure is
-- framed closer than a grove); none goes much further than the preset's,
-- where a figure shrank to a fifth of the picture in an empty floor.
local sides = {
  { yaw = 0, pitch = 10, distance = 1.0 },
  { yaw = 130, pitch = 22, distance = 0.77 },
  { yaw = 230, pitch = 7, distance = 0.92 },
  { yaw = 310, pitch = 16, distance = 0.65 },
}

function scene.setup()
  persist.scene_side = persist.scene_side or 0
  -- The preset's distance: taken when it is not the one these moves last
  -- wrote (a new preset, or a performer's), kept when this file is saved.
  local now = sylva.get("scene.camera_distance") or 6.5
  if not persist.scene_distance or math.abs(now - (persist.scene_written or -1)) > 1e-3 then
    persist.scene_distance = now
  end
end

function scene.update(dt)
  local side = sides[persist.scene_side % #sides + 1]
  local t = sylva.time
  local distance = persist.scene_distance * side.distance * (1 + 0.1 * math.sin(t * 0.2))
  persist.scene_written = distance
  sylva.set("scene.camera_distance", distance)
  sylva.set("scene.camera_pitch", side.pitch + 6 * math.sin(t * 0.13))
  sylva.set("scene.light_azimuth", 53 + 150 * math.sin(t * 0.05))
  sylva.set("scene.light_elevation", 45 + 18 * math.sin(t * 0.09))
end

function scene.beat(n)
  if n % 32 ~= 0 then
    return
  end
  persist.scene_side = persist.scene_side + 1
  local side = sides[persist.scene_side % #sides + 1]
  sylva.set("scene.camera_yaw", side.yaw)
end

return scene
