#!/usr/bin/env python3
"""Runs a command under a file size limit, as `ulimit -f` would set it.

    with_file_limit.py BYTES COMMAND...

The limit (RLIMIT_FSIZE) and the default SIGXFSZ disposition (Python itself
ignores the signal, and exec would pass that on) are inherited by COMMAND and
its children: a write past the limit kills a program unless it handles it.
"""
import os
import resource
import signal
import sys


def main():
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    os.execvp(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
