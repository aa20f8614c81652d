"""nlmcs: text-grounded non-linear Monte-Carlo search for FreeCiv-style strategy games."""

__version__ = "0.1.0"
