-- The world preset's choreography: the figure's moves, the colony's
-- surges, the rain's wandering cloud and the scene camera's, all at once
-- (scripts/moves/). Save this file, or a move, while the show runs to
-- change it.

require("moves.play")(require("moves.skinned"), require("moves.colony"), require("moves.rain"), require("moves.scene"))
