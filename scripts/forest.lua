-- The forest preset's choreography: the moves in scripts/moves/forest.lua, which
-- the default show (scripts/default.lua) dances too, and a walk into the
-- grove and out (scripts/moves/grove.lua). Save any of them while the
-- show runs to change it on the next frame.

require("moves.play")(require("moves.forest"), require("moves.grove"))
