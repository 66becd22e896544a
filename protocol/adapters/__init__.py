"""Bots of other libraries entered as gin-referee bots, unchanged (docs/existing-bots.md).

- :mod:`protocol.adapters.openspiel`: an OpenSpiel ``gin_rummy`` bot
  (``python -m protocol.adapters.openspiel simple|ismcts|MODULE:FACTORY``);
- :mod:`protocol.adapters.rlcard`: an RLCard ``gin-rummy`` agent
  (``python -m protocol.adapters.rlcard novice|MODEL_ID|MODULE:ATTR``).

Each maps the match's rules to the library's game where they agree and refuses at
``match_start`` (a line on stderr, exit status 2) where they do not (:mod:`.rules_map`). The
libraries are optional: ``pip install 'gin-referee[openspiel]'`` or ``'gin-referee[rlcard]'``.
Like the rest of :mod:`protocol`, nothing here imports the referee.
"""
