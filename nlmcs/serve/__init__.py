"""Human play in the browser: a local web server whose games are recorded into a corpus.

`config.py` says how the server is set up, `opponents.py` seats the built-in AI or a search
agent, `sessions.py` holds the table of games in play (each with its own state and corpus log),
`logs.py` reads those logs back (finished? where to resume?),
`views.py` turns a game into the JSON the client draws, `advice.py` asks the text agent about one
unit, and `app.py` is the HTTP layer over them. `static/` holds the single-page client.
"""
