-- Helpers of the `sylva` table written in Lua itself; loaded once per
-- state, before any script.

-- sylva.layer("colony").opacity = 0.5; sylva.layer("colony"):reseed();
-- sylva.layer("skinned"):play("Walking", 0.5) crossfades to a clip.
function sylva.layer(name)
  return setmetatable({}, {
    __index = function(_, key)
      if key == "reseed" then
        return function() sylva.reseed(name) end
      end
      if key == "play" then
        return function(_, clip, seconds)
          if seconds ~= nil then
            sylva.set(name .. ".clip_fade", seconds)
          end
          sylva.set(name .. ".clip", clip)
        end
      end
      return sylva.get(name .. "." .. key)
    end,
    __newindex = function(_, key, value)
      sylva.set(name .. "." .. key, value)
    end,
  })
end
