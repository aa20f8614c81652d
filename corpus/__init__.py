"""Offline corpus miner: recorded games -> state/action vectors -> similarity index and priors."""
