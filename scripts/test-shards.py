#!/usr/bin/env python3
"""Runs the built test suite in shards side by side, each shard on a JACK
"machine" of its own: a mount namespace with a private /dev/shm, so the
shards share no jackd server table (8 slots), no sockets, no per-user
metadata store (which any server's clean stop deletes) and no session
registry. The network and the processes are shared; tests pick free ports.

Whole test classes go to shards, the longest first to the least loaded
(the seconds each class took are in Tests/class-seconds.tsv; a class not
listed there counts 5 s a test). Each shard is one run of the xctest bundle,
as `swift test` runs it (a second `swift test` would wait for the first's
lock on .build). The output is XCTest's own, lines interleaved.

Two shards when a core or more is idle when it starts (niced work counts
as idle), beside a process that keeps the other core busy too: the classes
that cannot keep time beside another shard's servers and a busy core run
alone afterwards (ALONE), and the rest pass two by two beside it; one
shard on a machine busier than that, or of one core. JAS_TEST_SHARDS or
--shards sets the number.

The classes in ALONE run after the shards, by themselves: their verdict
depends on jackd keeping time at short periods, which jackd without
real-time scheduling cannot do beside another shard's servers on a loaded
two-core machine (JACK-NOTES: limit how many servers run at once).

A command can run beside the classes of ALONE (--beside-alone, e.g. the
benchmarks' smoke run): those leave a core idle, and the command's servers
live in this /dev/shm, apart from theirs. With one shard there is no such
phase, and it runs after the suite. Its output is printed when it ends; its
failure fails the run.

A class can be run once more under another environment (--again, e.g. the
PipeWire tests on the backports' PipeWire 1.4): that run is one more job,
balanced into the shards like a class, a process of its own after the
shard's classes.

Fails when a shard fails, crashes, or ran fewer tests than it was given.
Without root (no mount namespace), runs one shard in this /dev/shm.

usage: test-shards.py [--shards N] [--bundle PATH] [--write-seconds FILE] [--again VAR=VALUE CLASS]
                      [--beside-alone COMMAND]
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECONDS_FILE = os.path.join(ROOT, "Tests", "class-seconds.tsv")
# Beside another shard and a busy core: ten seconds bit-exact at a 64-frame
# period had every one of its six tries spoilt by xruns (335 in one), a
# netjack2 slave under a restarting master differed in more samples than its
# xruns explain, and takes cut on a scripted wall clock started files 4 ms off
# their boundary (a starved dummy jackd loses time without frames).
# Each runs in a process of its own, in this order: netjack2's servers last,
# as they take a moment to go.
ALONE = ["LoopbackBitExactTests", "RecordClockTests", "RecordTimeUnderXrunsTests", "RecordExtractTests", "NetJackTests"]
CASE_LINE = re.compile(r"^Test Case '([^'.]+)\.([^']+)' (started|passed|failed|skipped)(?: \(([0-9.]+) seconds\))?")


def listed_tests(bundle):
    listing = subprocess.run([bundle, "--list-tests"], capture_output=True, text=True, check=True).stdout
    classes = collections.OrderedDict()
    for line in listing.splitlines():
        line = line.strip()
        if "/" not in line:
            continue
        specifier = line.split("/")[0]          # Module.Class
        classes.setdefault(specifier, []).append(line)
    return classes


def known_seconds():
    seconds = {}
    if os.path.exists(SECONDS_FILE):
        for line in open(SECONDS_FILE):
            if line.startswith("#") or not line.strip():
                continue
            value, name = line.split()
            seconds[name] = float(value)
    return seconds


def plan(classes, shards, again=()):
    """The shards run side by side; then each class of ALONE, one after another.
    A load is [seconds, class specifiers, runs again (environment, class specifier)]."""
    seconds = known_seconds()
    cost = {c: seconds.get(c.split(".")[-1], 5.0 * len(tests)) for c, tests in classes.items()}
    loads = [[0.0, [], []] for _ in range(shards)]
    alone = []
    jobs = [(name, None) for name in classes] + [(name, environment) for environment, name in again]
    for name, environment in sorted(jobs, key=lambda job: -cost[job[0]]):
        if shards > 1 and environment is None and name.split(".")[-1] in ALONE:
            alone.append([cost[name], [name], []])
            continue
        lightest = min(loads, key=lambda load: load[0])
        lightest[0] += cost[name]
        if environment is None:
            lightest[1].append(name)
        else:
            lightest[2].append((environment, name))
    return loads + sorted(alone, key=lambda load: ALONE.index(load[1][0].split(".")[-1]))


def idle_cores(seconds=1.0):
    """How many of this machine's cores were idle over `seconds` (from /proc/stat); time given to niced
    work counts as idle (make test's builds beside the suite run at nice 19 and yield to it)."""
    def sample():
        fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
        return fields[1] + fields[3] + fields[4], sum(fields)   # nice + idle + iowait, all
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (os.cpu_count() or 1) * (idle1 - idle0) / max(1, total1 - total0)


def isolated():
    return subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", default=os.environ.get("JAS_TEST_SHARDS", "auto"),
                        help="shards side by side, or 'auto' (the default): the idle cores, at most 2")
    parser.add_argument("--bundle", default=os.path.join(ROOT, ".build", "debug", "JackAudioSessionPackageTests.xctest"))
    parser.add_argument("--write-seconds", metavar="FILE", help="write each class's measured seconds to FILE")
    parser.add_argument("--again", nargs=2, action="append", default=[], metavar=("VAR=VALUE", "CLASS"),
                        help="run CLASS once more with VAR=VALUE in its environment (a job of its own in a shard)")
    parser.add_argument("--beside-alone", metavar="COMMAND",
                        help="a shell command run beside the classes of ALONE (after the suite with one shard)")
    options = parser.parse_args()

    if not os.access(options.bundle, os.X_OK):
        sys.exit(f"test-shards: no test bundle at {options.bundle}: run `swift build --build-tests` first")
    classes = listed_tests(options.bundle)
    if options.shards == "auto":
        # The most idle of three one-second looks: a process that ends or a burst (the build's last writes) in one
        # second once made it see 0.5 idle cores on an idle machine and run one shard (28 minutes, not 17).
        idle = max(idle_cores() for _ in range(3))
        shards = max(1, min(2, os.cpu_count() or 1, int(idle + 0.3) + 1))
        print(f"test-shards: {idle:.1f} of {os.cpu_count()} cores idle", flush=True)
    else:
        shards = max(1, int(options.shards))
    if shards > 1 and not isolated():
        print("test-shards: cannot make a mount namespace (needs root): running one shard in this /dev/shm")
        shards = 1
    again = []
    for assignment, wanted in options.again:
        variable, _, value = assignment.partition("=")
        matching = [name for name in classes if name.split(".")[-1] == wanted]
        if not variable or len(matching) != 1:
            sys.exit(f"test-shards: --again {assignment} {wanted}: give VAR=VALUE and one test class of the bundle")
        again.append(({variable: value}, matching[0]))
    loads = plan(classes, shards, again)
    expected = sum(len(t) for t in classes.values()) + sum(len(classes[name]) for _, name in again)
    print(f"test-shards: {expected} tests in {len(classes)} classes; {shards} shard(s) side by side: "
          + ", ".join(f"{len(names)} classes" + "".join(f" + {name} again ({', '.join(env)})" for env, name in runs)
                      + f" ~{load:.0f} s" for load, names, runs in loads[:shards])
          + (f"; then by themselves: {', '.join(n for _, names, _ in loads[shards:] for n in names)} "
             f"~{sum(load for load, _, _ in loads[shards:]):.0f} s" if loads[shards:] else ""), flush=True)

    lock = threading.Lock()
    seen = [collections.Counter() for _ in loads]
    started_names = [set() for _ in loads]
    measured = collections.defaultdict(float)
    started = time.monotonic()

    def launch(index):
        """Runs the load's classes, then its runs again, one process after another, on a thread."""
        _, names, runs = loads[index]
        # Not under stdbuf: its LD_PRELOAD would reach every program the tests start, gdb's inferiors
        # among them; XCTest flushes each line itself. (The jack_lsp aborts once blamed on it were
        # jack_lsp's own bug with 24-byte server names: LoopbackServer.safeForJackLsp.)
        commands = ([([options.bundle, ",".join(names)], None)] if names else []) \
            + [([options.bundle, name], environment) for environment, name in runs]
        statuses = []

        def run_all():
            for command, environment in commands:
                if len(loads) > 1:
                    # A private /dev/shm for this run; the namespace ends with its last process.
                    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"', "shard"] + command
                process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                           errors="replace", bufsize=1,
                                           env=None if environment is None else {**os.environ, **environment})
                for line in process.stdout:
                    match = CASE_LINE.match(line)
                    with lock:
                        if match:
                            seen[index][match.group(3)] += 1
                            if match.group(3) == "started" and environment is None:
                                started_names[index].add(f"{match.group(1)}/{match.group(2)}")
                            if match.group(4) and environment is None:
                                measured[match.group(1)] += float(match.group(4))
                        sys.stdout.write(line)
                        sys.stdout.flush()
                statuses.append(process.wait())

        thread = threading.Thread(target=run_all)
        thread.start()
        return thread, statuses

    def finish(index, thread, statuses):
        thread.join()
        _, names, runs = loads[index]
        status = next((code for code in statuses if code != 0), 0)
        given = sum(len(classes[name]) for name in names) + sum(len(classes[name]) for _, name in runs)
        ran = seen[index]["started"]
        verdict = "passed" if status == 0 and ran == given else "FAILED"
        why = "" if status == 0 else f", exit status {status}" if status > 0 else f", killed by signal {-status}"
        label = f"{names[0]} alone" if index >= shards else f"shard {index + 1}"
        print(f"test-shards: {label}: {verdict}: ran {ran} of {given} tests ({seen[index]['failed']} failed, "
              f"{seen[index]['skipped']} skipped{why})", flush=True)
        missing = [t for name in names for t in classes[name] if t.split(".", 1)[1] not in started_names[index]]
        if missing:
            print(f"test-shards: {label} never started {len(missing)}: " + ", ".join(missing[:8])
                  + (" ..." if len(missing) > 8 else ""), flush=True)
        return verdict == "passed"

    side_by_side = [(index, *launch(index)) for index in range(min(shards, len(loads)))]
    failed = not all([finish(*running) for running in side_by_side])
    beside = None
    beside_log = tempfile.TemporaryFile(mode="w+")

    def start_beside(when):
        print(f"test-shards: {when}: {options.beside_alone}", flush=True)
        return subprocess.Popen(["bash", "-c", options.beside_alone], cwd=ROOT, stdout=beside_log, stderr=subprocess.STDOUT)

    if options.beside_alone and len(loads) > shards:
        beside = start_beside("beside the classes of ALONE")
    for index in range(shards, len(loads)):
        print(f"test-shards: now by itself: {loads[index][1][0]}", flush=True)
        failed |= not finish(index, *launch(index))
    if options.beside_alone:
        beside = beside or start_beside("after the suite")
        status = beside.wait()
        beside_log.seek(0)
        sys.stdout.write(beside_log.read())
        print(f"test-shards: {options.beside_alone}: {'passed' if status == 0 else f'FAILED (exit status {status})'}",
              flush=True)
        failed |= status != 0
    print(f"test-shards: {'FAILED' if failed else 'passed'} in {time.monotonic() - started:.0f} s", flush=True)
    if options.write_seconds:
        with open(options.write_seconds, "w") as out:
            out.write("# seconds\tclass (written by scripts/test-shards.py --write-seconds)\n")
            for name, value in sorted(measured.items(), key=lambda item: -item[1]):
                out.write(f"{value:.1f}\t{name}\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
