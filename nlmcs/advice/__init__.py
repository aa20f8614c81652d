"""A manual's advice as data: rules in the game's words, players that follow or break them, and
the audit that measures what each rule is worth without a reader."""
