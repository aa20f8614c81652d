"""The text-grounded value network of Branavan, Silver & Barzilay (2011) and its no-text variants.

Read `reference` first: the forward pass and both update rules in plain numpy. `features` turns
game labels and a parsed manual into hashed feature ids, `rows` lays them out per candidate,
`network` holds the weights and scores fast, `batch` and `learner` apply the online updates from
roll-out rewards, `kernels` holds the compiled versions, `evaluator` plugs the network into the
search.
"""
