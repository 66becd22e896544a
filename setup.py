"""The compiled helpers (docs/performance.md): the request writer
(``referee/match/_request.c``), the rules' legal actions and common moves
(``referee/rules/_legal.c``, ``referee/rules/_moves.c``), the meld searches
(``referee/rules/_melds.c``) and the learning environment's
observation writer (``referee/env/_observe.c``).

Everything else about the package is in ``pyproject.toml``. The extensions are optional: an
install without a C compiler or Python's headers still succeeds, and the referee then uses the
Python writers they are tested against.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "referee.match._request",
            sources=["referee/match/_request.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "referee.rules._legal",
            sources=["referee/rules/_legal.c"],
            depends=["referee/rules/_positions.h"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "referee.rules._melds",
            sources=["referee/rules/_melds.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "referee.rules._moves",
            sources=["referee/rules/_moves.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "referee.env._observe",
            sources=["referee/env/_observe.c"],
            depends=["referee/rules/_positions.h"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
