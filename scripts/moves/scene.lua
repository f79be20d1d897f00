-- Scene camera moves for presets whose layers share one scene: the camera
-- breathes in and out (a dolly over eight bars), rises and sinks, and every
-- eight bars swings to a new side of the stage (its smoothing makes the
-- swing a quick glide, never a jump that flings the water). The key light
-- swings most of the way round the stage and back every two minutes,
-- dipping towards a dusk and climbing back, so the figure's shadow turns
-- and stretches.

local scene = {}

local sides = {
  { yaw = 0, pitch = 10, distance = 6.5 },
  { yaw = 130, pitch = 22, distance = 5.0 },
  { yaw = 230, pitch = 5, distance = 8.0 },
  { yaw = 310, pitch = 16, distance = 4.2 },
}

function scene.setup()
  persist.scene_side = persist.scene_side or 0
end

function scene.update(dt)
  local side = sides[persist.scene_side % #sides + 1]
  local t = sylva.time
  sylva.set("scene.camera_distance", side.distance * (1 + 0.18 * math.sin(t * 0.2)))
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
