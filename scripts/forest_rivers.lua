-- The forest_rivers preset's choreography: the walk into the grove and out
-- (scripts/moves/grove.lua), so the woods along the rivers are seen from
-- among their trees as well as from over them, where the haze had hidden
-- them from a camera that never came down. No brush: the rivers alone say
-- where the trees grow.

require("moves.play")(require("moves.grove"))
