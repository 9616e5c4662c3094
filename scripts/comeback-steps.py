#!/usr/bin/env python3
"""Where a comeback's time goes: reads a JACKKIT_TRACE file written during
`restart-soak` (every JackKit process of the run appends its steps, with the
monotonic time in ms, its PID and thread) and prints, for each step of each
tool's reconnect, the median and 90th percentile of the time since the
soak's readiness probe was given a client by the new jackd (the moment the
soak counts a comeback from).

usage: JACKKIT_TRACE=/tmp/trace restart-soak --restarts 50
       scripts/comeback-steps.py /tmp/trace [SOAK_PID]
"""
import collections
import re
import statistics
import sys

LINE = re.compile(r"^(\d+\.\d+) (\d+)/\d+ (.*)$")
# The steps of one comeback, in order; the first line of each that follows the probe's open counts.
STEPS = [
    ("server watch", re.compile(r"^server watch: .* appeared")),
    ("open asked", re.compile(r"^open '[^']*' on '[^']*': calling jack_client_open")),
    ("open returned", re.compile(r"^open '[^']*' on '[^']*': jack_client_open gave a client")),
    ("adopting", re.compile(r"^reconnect: client opened, adopting")),
    ("devices", re.compile(r"^activation: devices looked at")),
    ("active", re.compile(r"^activation: '.*' active")),
    ("connected", re.compile(r"^activation: connected")),
    ("latency pass", re.compile(r"^activation: latency pass")),
    ("complete", re.compile(r"^reconnect: (reactivation complete|adopted)$")),
]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lines = []
    for raw in open(sys.argv[1], errors="replace"):
        match = LINE.match(raw.rstrip("\n"))
        if match:
            lines.append((float(match.group(1)), int(match.group(2)), match.group(3)))
    lines.sort(key=lambda line: line[0])
    probes = [line for line in lines if "'harness-probe'" in line[2] and "gave a client" in line[2]]
    soak = int(sys.argv[2]) if len(sys.argv) > 2 else (probes[0][1] if probes else None)
    accepted = [time for time, pid, _ in probes if pid == soak]
    tools = sorted({pid for _, pid, _ in lines if pid != soak})
    delays = collections.defaultdict(lambda: collections.defaultdict(list))
    for tool in tools:
        own = [line for line in lines if line[1] == tool]
        # An episode: from a shutdown callback (the server went) to the next.
        starts = [time for time, _, step in own if step.startswith("shutdown callback")]
        for index, begun in enumerate(starts):
            ended = starts[index + 1] if index + 1 < len(starts) else float("inf")
            probe = next((time for time in accepted if begun < time < ended), None)
            if probe is None:
                continue
            seen = set()
            for time, _, step in own:
                if not begun <= time < ended:
                    continue
                for name, pattern in STEPS:
                    if name not in seen and pattern.match(step):
                        seen.add(name)
                        delays[tool][name].append(time - probe)
    print(f"{len(accepted)} restarts; ms after the soak's probe got a client (median / p90), per process:")
    for tool in tools:
        cells = []
        for name, _ in STEPS:
            values = sorted(delays[tool][name])
            if values:
                p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
                cells.append(f"{name} {statistics.median(values):.1f}/{p90:.1f} ({len(values)})")
        print(f"  pid {tool}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
