"""``agurk serve``: play, watch and replay Agurk in the browser.

:mod:`agurk.web.session` is one game (the browser's front end on :class:`agurk.match.Match`:
what its owner may see), :mod:`agurk.web.store` keeps the games of every user with their tokens and expiry,
:mod:`agurk.web.hint` values the cards for the hint button, :mod:`agurk.web.app` is the ASGI
app (Starlette) with its JSON API and the page in ``static/``, and :mod:`agurk.web.load`
plays many games over loopback HTTP (``agurk bench serve``); :func:`agurk.web.server.serve` runs the server.
Every rule comes from the engine.
"""

MAX_GAMES = 1000
"""Most concurrent games one wave of :mod:`agurk.web.load` may play (``agurk bench serve --games``)."""
MAX_SECONDS = 1800.0
"""Most seconds a whole load test of :mod:`agurk.web.load` may take (``agurk bench serve --seconds``)."""
