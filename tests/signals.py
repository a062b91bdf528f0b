"""What the tests that send Ctrl-C to a child process share."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` of a child that must hear Ctrl-C: a test run started in the background ignores SIGINT,
    and a child inherits that (Python then never raises KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
