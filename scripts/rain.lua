-- The rain preset's choreography: the moves in scripts/moves/rain.lua.
-- Save either file while the show runs to change it on the next frame.

require("moves.play")(require("moves.rain"))
