"""Inspecting learned sentence relevance: the decision log read back (`log`), a terminal view
(`views`), game-wide summaries (`summary`), the self-contained HTML report (`report`, with its
`plots` and `maps`), and relevance accuracy against decoy sentences (`decoys`, `accuracy`).

Library side of `nlmcs relevance show|report|accuracy` and `nlmcs play --report`.
"""
