"""The text reader: a manual turned into a policy prior over an agent's legal actions.

`index` lays a manual's words out once (parse features only, so a word-permuted twin has the same
features in other places); `forward` is the reader's network in torch; `prior` asks it at play
time (cached per agent, state and candidate set); `weights` is its readable model file; `train`
learns the weights across many games from their outcomes.
"""
