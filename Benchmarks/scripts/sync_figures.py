#!/usr/bin/env python3
"""Sync figures on the built `notes` and `amber-sync` executables.

    swift build --product notes && swift build --product amber-sync
    python3 Benchmarks/scripts/sync_figures.py [.build/debug] [runs]

1. First sync of 10,000 notes: `notes sync` on a phone holding them (push), then `notes sync` on an
   empty phone (pull), each against `notes import` of the same notes as the baseline (the same
   10,000 records written locally, no network).
2. One change reaching a live client: `notes sync --watch` on the night phone; the day phone adds a
   note and runs `notes sync`; the time from starting that process to the night phone printing
   the note, beside the time the `notes sync` process takes (its start-up included).
"""
import json, os, statistics, subprocess, sys, tempfile, time, uuid

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
notes_bin, sync_bin = os.path.join(build, "notes"), os.path.join(build, "amber-sync")


def run(binary, *arguments, home=None, cwd=None):
    env = dict(os.environ, **({"NOTES_HOME": home} if home else {}))
    start = time.perf_counter()
    result = subprocess.run([binary, *arguments], env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{binary} {' '.join(arguments)} failed: {result.stderr}")
    return result.stdout, elapsed


def server(directory):
    run(sync_bin, "user", "add", "ann", cwd=directory)
    token = run(sync_bin, "token", "add", "ann", cwd=directory)[0].strip().splitlines()[-1]
    process = subprocess.Popen([sync_bin, "serve", "--port", "0"], cwd=directory, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    return process, line.removeprefix("listening on "), token


def archive(count):
    tag = str(uuid.uuid4()).upper()
    notes = [{"id": str(uuid.uuid4()).upper(), "text": f"note {i} " + "x" * 120, "tagIDs": [tag],
              "created": 780000000.0 + i, "modified": 780000000.0 + i} for i in range(count)]
    return {"notes": notes, "tags": [{"id": tag, "name": "bulk"}]}


first_push, first_pull, baseline = [], [], []
for _ in range(runs):
    with tempfile.TemporaryDirectory() as directory:
        process, url, token = server(directory)
        try:
            path = os.path.join(directory, "notes.json")
            with open(path, "w") as file:
                json.dump(archive(10_000), file)
            day, night = os.path.join(directory, "day"), os.path.join(directory, "night")
            baseline.append(run(notes_bin, "import", path, home=day)[1])
            first_push.append(run(notes_bin, "sync", "--server", url, "--token", token, home=day)[1])
            first_pull.append(run(notes_bin, "sync", "--server", url, "--token", token, home=night)[1])
        finally:
            process.terminate()
            process.wait()

b = statistics.median(baseline)
print(f"first sync, 10,000 notes ({runs} runs, medians): import {b:.2f} s; "
      f"push {statistics.median(first_push):.2f} s ({statistics.median(first_push) / b:.1f}x import); "
      f"pull into an empty phone {statistics.median(first_pull):.2f} s ({statistics.median(first_pull) / b:.1f}x import)")

with tempfile.TemporaryDirectory() as directory:
    process, url, token = server(directory)
    day, night = os.path.join(directory, "day"), os.path.join(directory, "night")
    run(notes_bin, "sync", "--server", url, "--token", token, home=day)
    run(notes_bin, "sync", "--server", url, "--token", token, home=night)
    watch = subprocess.Popen([notes_bin, "sync", "--watch"], env=dict(os.environ, NOTES_HOME=night),
                             stdout=subprocess.PIPE, text=True)
    watch.stdout.readline()
    arrivals = {}

    def read():
        for line in watch.stdout:
            arrivals.setdefault(line.strip(), time.perf_counter())

    import threading
    threading.Thread(target=read, daemon=True).start()
    time.sleep(1)
    latencies, syncs = [], []
    try:
        for i in range(20):
            run(notes_bin, "add", f"live {i}", home=day)
            start = time.perf_counter()
            syncs.append(run(notes_bin, "sync", home=day)[1])
            deadline = start + 10
            while time.perf_counter() < deadline:
                arrived = next((t for l, t in list(arrivals.items()) if f"live {i} " in l or l.endswith(f"live {i}")), None)
                if arrived:
                    latencies.append(arrived - start)
                    break
                time.sleep(0.001)
    finally:
        watch.terminate()
        process.terminate()
    latencies.sort()
    print(f"one change reaching a live client ({len(latencies)} of 20 changes arrived): from the start of the day "
          f"phone's `notes sync` to the night phone printing it: median {statistics.median(latencies) * 1000:.0f} ms, "
          f"max {latencies[-1] * 1000:.0f} ms; the `notes sync` process itself (start to exit): "
          f"median {statistics.median(syncs) * 1000:.0f} ms")
