"""Games the planners can play, all behind the interface in `nlmcs.games.base`."""
