"""The compiled request writer (``referee/match/_request.c``, docs/performance.md) and the
learning environment's compiled observation writer (``referee/env/_observe.c``, docs/env.md).

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
            "referee.env._observe",
            sources=["referee/env/_observe.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
