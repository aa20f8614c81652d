"""A bridge to Debian's unmodified FreeCiv 3.0 server over its own network protocol.

Layers, each usable alone: `protocol_source` finds (or fetches from Debian's source package) the
protocol's packet definitions, `packets_def` reads them, `codec` turns bytes into packets and back
(framing, compression, delta caches), `server` runs a local `freeciv-server`, and `client` joins
one and keeps what the server has told it. FreeCiv's own files are read where they are installed
or downloaded, never shipped with nlmcs.
"""
