"""The policy/value network (the AlphaZero line): trained on a corpus, then by self-play, and
guiding PUCT at play time.

`features` lays a player's decision out as tokens (ragged: only legal actions have rows);
`model` is the torch network; `checkpoint` its file; `guide` asks it during a search; `samples`
holds training positions (replayed corpus games, self-play games); `selfplay` plays the games;
`train` fits and evaluates, generation by generation.
"""
