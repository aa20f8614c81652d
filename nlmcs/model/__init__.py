"""The text-grounded value network of Branavan, Silver & Barzilay (2011) and its no-text variants.

`features` turns game labels and a parsed manual into hashed feature ids, `network` scores and
samples with them, `learner` applies the online updates from roll-out rewards.
"""
