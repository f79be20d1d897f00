-- The forest_rivers preset's choreography: the walk into the grove and out
-- (scripts/moves/grove.lua), so the woods along the rivers are seen from
-- among their trees as well as from over them, where the haze had hidden
-- them from a camera that never came down. No brush: the rivers alone say
-- where the trees grow.

-- Its young trees stand close along the banks: the walk stops above their
-- crowns rather than among their leaves.
local grove = require("moves.grove")
grove.nearest = 0.3

require("moves.play")(grove)
