#!/usr/bin/env python3
"""Prints a training pipeline's decisions in a form FileCheck reads.

    pipeline_actions.py FILE.mlir
        one line per transfer of the cut step (shardc --emit=partitioned):
        "MAKER -> READER: TYPE", the functions that send and receive it;
    pipeline_actions.py --manifest ARTIFACT/manifest.json
        one line per pp rank: its compute actions in order, F/B/W with the
        micro-batch (B: backward_input, W: backward_weight), U with the
        update's level; with virtual stages each also names its stage (F0@2).
"""
import json
import re
import sys


def transfers(path):
    function = None
    sends, recvs = {}, {}
    for line in open(path):
        header = re.search(r"func\.func @([\w.]+)\(", line)
        if header:
            function = header.group(1)
        send = re.search(r"dist\.send %\S+ to stage \d+ transfer (\d+) : (\S+)", line)
        if send:
            sends[int(send.group(1))] = (function, send.group(2))
        recv = re.search(r"dist\.recv from stage \d+ transfer (\d+) : (\S+)", line)
        if recv:
            recvs[int(recv.group(1))] = function
    for transfer in sorted(sends):
        maker, type_ = sends[transfer]
        print(f"{maker} -> {recvs.get(transfer, '?')}: {type_}")


def actions(path):
    pipeline = json.load(open(path))["pipeline"]
    virtual = pipeline["virtual_stages"] > 1
    letters = {"forward": "F", "backward_input": "B", "backward_weight": "W"}
    for rank, listed in enumerate(pipeline["actions"]):
        words = []
        for action in listed:
            op = action["op"]
            if op in letters:
                word = f"{letters[op]}{action['microbatch']}"
            elif op == "update":
                word = f"U{action['level']}"
            else:
                continue
            words.append(word + (f"@{action['stage']}" if virtual else ""))
        print(f"pp {rank}: " + " ".join(words))


if __name__ == "__main__":
    if sys.argv[1] == "--manifest":
        actions(sys.argv[2])
    else:
        transfers(sys.argv[1])
