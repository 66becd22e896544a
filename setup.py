"""The compiled request writer (``referee/match/_request.c``, docs/performance.md).

Everything else about the package is in ``pyproject.toml``. The extension is optional: an
install without a C compiler or Python's headers still succeeds, and the referee then uses the
Python writer it is tested against.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "referee.match._request",
            sources=["referee/match/_request.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
