-- The skinned preset's choreography: the moves in scripts/moves/skinned.lua, which
-- the default show (scripts/default.lua) dances too. Save either file
-- while the show runs to change it on the next frame.

require("moves.play")(require("moves.skinned"))
