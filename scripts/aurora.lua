-- The aurora preset's choreography (presets/default.toml). The aurora's
-- curtains twist slowly on their own; every phrase the echo turns the other way; every two phrases
-- the sky folds differently. Save this file while the show runs to see a
-- change on the next frame.

local phrase = 16
local folds = { 1.6, 2.4, 1.1, 3.2 }

function setup()
  persist.phrases = persist.phrases or 0
  sylva.log("aurora.lua ready after " .. persist.phrases .. " phrases")
end

function update(dt)
  -- About a minute per breath.
  sylva.set("shader.aurora.warp", 1.2 + 0.5 * math.sin(sylva.time * 0.1))
end

function on_beat(n)
  if n % phrase ~= 0 then
    return
  end
  persist.phrases = persist.phrases + 1
  sylva.ramp("shader.echo.turn", -sylva.get("shader.echo.turn"), 4, "in_out")
  if persist.phrases % 2 == 0 then
    local next_folds = folds[(persist.phrases // 2) % #folds + 1]
    sylva.ramp("shader.aurora.folds", next_folds, 8, "smooth")
  end
end

function on_preset(name)
  sylva.log("preset " .. name)
end
