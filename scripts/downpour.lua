-- The downpour's choreography: the figure's moves, the wandering shower
-- and the scene camera's, all at once (scripts/moves/). Save this file,
-- or a move, while the show runs to change it.

require("moves.play")(require("moves.skinned"), require("moves.rain"), require("moves.scene"))
