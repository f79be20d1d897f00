-- The skinned preset's choreography: the figure's moves in
-- scripts/moves/skinned.lua, which the default show (scripts/default.lua)
-- dances too, and the scene camera's (scripts/moves/scene.lua). Save any
-- of them while the show runs to change it on the next frame.

require("moves.play")(require("moves.skinned"), require("moves.scene"))
