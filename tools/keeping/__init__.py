"""Cards after they are made and before and after they are decided: the bot's door to them,
which decisions are still to be shown, the sweeps, the reconciler; never runs a write."""
