"""The ``coapcc`` command the package installs: the command line of the ``coapcc`` binary (every
subcommand, the same options and exit statuses), run by the package's extension."""

import signal
import sys

from . import _native


def main() -> None:
    # Ctrl-C as the binary takes it: the command's own handler where it has one (a run stops and
    # keeps what finished), else the end of the process; not Python's KeyboardInterrupt, which
    # would wait for the command to return
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_native.cli(["coapcc", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
