"""What a start-up or crash fault quotes of a bot's stderr (:func:`quote_stderr`), and the
hint it adds when something was not found (:func:`start_hint`), on the stderr real programs
write."""

from __future__ import annotations

from referee.net.quoting import STDERR_CHARS, quote_stderr, start_hint

NODE_ESM = """node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zeromq' imported from /bots/node/bot.js
    at packageResolve (node:internal/modules/esm/resolve:873:9)
    at moduleResolve (node:internal/modules/esm/resolve:946:18)
    at ModuleJob._link (node:internal/modules/esm/module_job:168:49) {
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v20.20.2
"""

NODE_CJS = """node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module 'zeromq'
Require stack:
- /bots/node/bot.cjs
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/bots/node/bot.cjs' ]
}

Node.js v20.20.2
"""

PYTHON = """Traceback (most recent call last):
  File "/bots/b.py", line 3, in <module>
    import zmq
  File "/bots/errors.py", line 1, in <module>
    raise_error()
ModuleNotFoundError: No module named 'zmq'
"""


def test_node_quotes_the_error_line_and_the_tail() -> None:
    quoted = quote_stderr(NODE_ESM)
    assert quoted.startswith("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zeromq'")
    assert quoted.endswith(" | ... | code: 'ERR_MODULE_NOT_FOUND' | } | Node.js v20.20.2")
    assert "throw new" not in quoted and len(quoted) <= STDERR_CHARS
    assert quote_stderr(NODE_CJS).startswith("Error: Cannot find module 'zeromq' | ... | ")


def test_a_traceback_is_quoted_by_its_exception_not_a_frame_naming_error() -> None:
    # the frame lines name "errors.py": the exception, the last line, is the error
    assert (
        quote_stderr(PYTHON) == 'File "/bots/errors.py", line 1, in <module> | raise_error()'
        " | ModuleNotFoundError: No module named 'zmq'"
    )
    after = PYTHON + "During shutdown\nmore\nlines\n"
    assert (
        quote_stderr(after) == "ModuleNotFoundError: No module named 'zmq' | During shutdown"
        " | more | lines"
    )
    further = after + "and one more\n"
    assert quote_stderr(further).startswith("ModuleNotFoundError: No module named 'zmq' | ... | ")


def test_the_bound_holds_and_the_error_line_keeps_two_thirds_at_most() -> None:
    long_error = "Error: " + "x" * 500
    quoted = quote_stderr(long_error + "\n" + "\n".join(f"line {i} " + "y" * 90 for i in range(9)))
    assert len(quoted) == STDERR_CHARS
    head, _, tail = quoted.partition(" | ... | ")
    assert head.endswith("...") and len(head) == STDERR_CHARS * 2 // 3
    assert tail.startswith("...") and tail.endswith("y" * 80)
    assert quote_stderr("") == "" and quote_stderr("just one line\n") == "just one line"
    assert quote_stderr("a\nb\nc\nd\n") == "b | c | d"  # no error named: the tail alone


def test_hints_name_what_was_not_found() -> None:
    assert start_hint(1, NODE_ESM) == (
        "Node package 'zeromq' not found: run npm ci in the bot's directory"
    )
    assert start_hint(1, NODE_CJS) is not None and "'zeromq'" in str(start_hint(1, NODE_CJS))
    # a bot's own file missing is no package to install
    assert start_hint(1, "Error: Cannot find module '/bots/node/bot.js'") is None
    python = start_hint(1, PYTHON)
    assert python is not None and python.startswith("Python module 'zmq' not found")
    assert "activate the venv" in python
    plain = start_hint(1, "/usr/bin/python3: No module named no_such_bot")
    assert plain is not None and "'no_such_bot'" in plain
    missing = start_hint(127, "/root/.pyenv/shims/python3: line 12: pyenv: No such file")
    assert missing is not None and missing.startswith("command not found")
    assert "PATH" in missing and "activate the venv" in missing
    assert start_hint(1, "Segmentation fault") is None and start_hint(None, "") is None
