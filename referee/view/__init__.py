"""HTML views of matches and tournaments: a self-contained replay page per match record
(:mod:`referee.view.replay_html`) and a standings report per tournament directory
(:mod:`referee.view.report_html`). Pages need no network: styles, scripts and data are inline.

Sits between the command line and the tournament layer; see docs/viewer.md.
"""
