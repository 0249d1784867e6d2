#!/usr/bin/env python3
"""Checks the per-rank lines `shardrun --profile` prints after its step table.

    shardrun ARTIFACT ... --profile [--trace T.json] | check_rank_balance.py RANKS
        [--output-rank R] [--no-waiting | --trace T.json]

Prints "balance: N ranks, parts add up" when:
- there is one line per rank, ranks 0..N-1 in order;
- each rank's steps equal its compute plus its collectives;
- the output rank's (R, default 0: the step table is its) steps equal the
  sum of the step table's ms/iter, and its
  collectives the sum of the collective steps' (kernels named all_*, or
  broadcast, send, recv, moe_*; all_slice is a collective too, bound to a group);
- each waiting is between 0 and the rank's collectives (or '-' with
  --no-waiting, for ranks that ran different steps); with --trace (ranks as
  threads: one file) it is also what the trace's step events give: per
  collective step, the rank's time in it over the runs less the least any
  rank took in it over the runs, divided by the runs;
- each idle share (the run outside any step) is a percentage in [0, 100].
Figures are printed to 4 decimals, so sums are compared within the rounding.
"""
import collections
import json
import re
import sys

COLLECTIVE = re.compile(r"^(all_\w+|reduce_scatter|broadcast|send|recv|moe_\w+)$")


def fail(message):
    print(f"balance: FAIL: {message}")
    sys.exit(1)


def trace_waiting(path, ranks):
    """Each rank's ms/iter waiting in collectives, from the trace's step events."""
    events = [e for e in json.load(open(path))["traceEvents"]
              if e["ph"] == "X" and e.get("cat") == "step" and COLLECTIVE.match(e["name"])]
    steps = collections.defaultdict(lambda: collections.Counter())  # step -> rank -> us
    runs = {e["args"]["iteration"] for e in events}
    for e in events:
        steps[e["args"]["step"]][e["tid"]] += e["dur"]
    waited = [0.0] * ranks
    for durations in steps.values():
        if len(durations) != ranks:
            fail(f"a step has events of {len(durations)} ranks, not {ranks}")
        least = min(durations.values())
        for rank, dur in durations.items():
            waited[rank] += (dur - least) / 1e3 / len(runs)
    return waited


def main():
    ranks, no_waiting = int(sys.argv[1]), "--no-waiting" in sys.argv[2:]
    trace = sys.argv[sys.argv.index("--trace") + 1] if "--trace" in sys.argv else None
    output_rank = int(sys.argv[sys.argv.index("--output-rank") + 1]) \
        if "--output-rank" in sys.argv else 0
    lines = sys.stdin.read().splitlines()
    steps = [re.match(r"^(\d+)\s+(\S+)\s+([0-9.]+)\s+[0-9.]+%", line) for line in lines]
    steps = [(m.group(2), float(m.group(3))) for m in steps if m]
    if not steps:
        fail("no step table")
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("rank ")) + 1
    except StopIteration:
        fail("no per-rank table")
    rows = [line.split() for line in lines[start:start + ranks]]
    if len(rows) != ranks or lines[start + ranks:start + ranks + 1] not in ([], [""]) and \
            re.match(r"^\d+\s", lines[start + ranks]):
        fail(f"expected {ranks} rank lines")
    tolerance = 1e-4 * (len(steps) + 2)
    for index, row in enumerate(rows):
        if len(row) != 6 or row[0] != str(index):
            fail(f"line {row} is not rank {index}'s")
        if not row[5].endswith("%") or not 0 <= float(row[5][:-1]) <= 100:
            fail(f"rank {index}: idle {row[5]}, expected a share in [0%, 100%]")
        total, compute, collectives = map(float, row[1:4])
        if abs(total - compute - collectives) > 3e-4:
            fail(f"rank {index}: steps {total} != compute {compute} + collectives {collectives}")
        if no_waiting:
            if row[4] != "-":
                fail(f"rank {index}: waiting {row[4]}, expected '-'")
        elif not 0 <= float(row[4]) <= collectives + 1e-4:
            fail(f"rank {index}: waiting {row[4]} outside [0, {collectives}]")
    if trace:
        waited = trace_waiting(trace, ranks)
        for index, row in enumerate(rows):
            if abs(waited[index] - float(row[4])) > 0.05 + 0.01 * waited[index]:
                fail(f"rank {index}: waiting {row[4]}, the trace gives {waited[index]:.4f}")
    output = rows[output_rank]
    if abs(sum(ms for _, ms in steps) - float(output[1])) > tolerance:
        fail(f"rank {output_rank}'s steps {output[1]} != the step table's sum "
             f"{sum(ms for _, ms in steps)}")
    collective = sum(ms for kernel, ms in steps if COLLECTIVE.match(kernel))
    if abs(collective - float(output[3])) > tolerance:
        fail(f"rank {output_rank}'s collectives {output[3]} != the collective steps' sum "
             f"{collective}")
    print(f"balance: {ranks} ranks, parts add up")


if __name__ == "__main__":
    main()
