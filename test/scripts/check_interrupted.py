#!/usr/bin/env python3
"""Stops a command with a signal while it stages its output, and checks that
it leaves nothing behind.

    check_interrupted.py [--signal INT|TERM|HUP] [--started-ignored] FOLDER COMMAND...

Runs COMMAND, waits for a hidden staging entry ('.NAME.partial-PID' or
'.NAME.tmp.PID.N') to appear in FOLDER, sends the signal (default INT), and
asserts that the command died of it and that FOLDER then holds the same
names as before. Fails if the command ends before any staging was seen.

COMMAND starts with the signal's default disposition, whatever this script
inherited (CI under nohup ignores SIGHUP, lit ignores SIGINT). With
--started-ignored it starts with the signal ignored, as under nohup, and
must instead finish its work and succeed.
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--signal", default="INT", choices=["INT", "TERM", "HUP"])
    parser.add_argument("--started-ignored", action="store_true")
    parser.add_argument("folder")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    number = getattr(signal, "SIG" + args.signal)
    before = set(os.listdir(args.folder))
    disposition = signal.SIG_IGN if args.started_ignored else signal.SIG_DFL
    process = subprocess.Popen(args.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(number, disposition))
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        staging = [name for name in set(os.listdir(args.folder)) - before
                   if name.startswith(".") and (".partial-" in name or ".tmp." in name)]
        if staging:
            process.send_signal(number)
            break
        time.sleep(0.0005)
    else:
        process.kill()
        sys.exit(f"check_interrupted: no staging appeared in {args.folder} while the command ran")
    _, stderr = process.communicate(timeout=60)
    problems = []
    expected = 0 if args.started_ignored else -number
    if process.returncode != expected:
        problems.append(f"exit status {process.returncode}, expected "
                        + ("success" if args.started_ignored else f"death by SIG{args.signal}")
                        + (f" ({stderr.decode(errors='replace').strip()})" if stderr else ""))
    left = set(os.listdir(args.folder)) ^ before
    if left:
        problems.append(f"{args.folder} changed: {sorted(left)}")
    if problems:
        sys.exit("check_interrupted: " + "; ".join(problems))


if __name__ == "__main__":
    main()
