"""`karet run` killed and run concurrently, against the oracle of
test_karet_run.py: kills at any point of a run (before any commit, between
the tables' commits, after both) leave tables a later run brings to the
oracle's rows, and of runs started together only one reads the new files.

Apart from test_karet_run.py so that the two files, each minutes long
under ASan, can run on two workers (pytest-xdist keeps a file on one)."""

import json
import random

from karet_lake import LocalLake, run_karet
from test_karet_run import SLUG, Model


# ---- crashes and concurrent runs ---------------------------------------------

def start_karet(lake, config, tmp_path, full=False):
    import subprocess
    from karet_lake import clean_env, karet_run_args
    args = karet_run_args(lake, SLUG, config, tmp_path, full)
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())


def resync(m):
    """After runs the model cannot follow (killed, concurrent): a run to the
    end, whatever kind it is, then the tables must equal the oracle."""
    _, summary = run_karet(m.lake, SLUG, m.config, m.tmp)
    for t in ("facts", "plain"):
        m.read[t] = {k: v for k, v in m.files.items() if k.startswith(m.prefixes(t))}
        m.built_with[t] = m.signature(t)
    m.check()
    return summary


def wait_at_most(proc, seconds):
    """Until `seconds` have passed or the run has ended: a kill then falls
    where a sleep would have put it, and a run over is not waited out."""
    import subprocess
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def test_sigkill_during_runs(tmp_path):
    import signal
    import time
    rng = random.Random(99)
    m = Model(LocalLake(tmp_path / "lake"), tmp_path, rng)
    kills = 0
    landed = {"none": 0, "some": 0, "all": 0}  # tables committed by the killed run
    took = 1.0  # how long a whole run takes here: kills fall anywhere within it
    while kills < 50:
        for _ in range(rng.randint(1, 4)):
            r = rng.random()
            if r < 0.7:
                m.upload(in_order=rng.random() < 0.8, bad=rng.random() < 0.05)
            elif r < 0.8:
                m.replace()
            elif r < 0.9:
                m.delete()
            else:
                m.config_index = 1 - m.config_index
        before = {t: len(m.lake.metadata_files(SLUG, t)) for t in ("facts", "plain")}
        proc = start_karet(m.lake, m.config, tmp_path, full=rng.random() < 0.2)
        if rng.random() < 0.5:  # anywhere (a run with more files to read takes longer)
            wait_at_most(proc, rng.uniform(0, 2.5 * took))
        else:  # soon after the first table's commit: between or during the others
            while proc.poll() is None and len(m.lake.metadata_files(SLUG, "facts")) == before["facts"]:
                time.sleep(0.005)
            wait_at_most(proc, rng.uniform(0, 0.3 * took))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
            proc.communicate()
            moved = sum(len(m.lake.metadata_files(SLUG, t)) > before[t] for t in before)
            landed[["none", "some", "all"][moved]] += 1
        proc.communicate()
        if rng.random() < 0.5:
            continue  # more uploads, then maybe another killed run
        t0 = time.monotonic()
        resync(m)
        took = time.monotonic() - t0
    resync(m)
    assert kills >= 50
    # The kills fell before any commit, between the tables' commits and after both.
    assert landed["none"] >= 5 and landed["some"] + landed["all"] >= 5, landed


def test_concurrent_runs_never_both_append(tmp_path):
    rng = random.Random(3)
    m = Model(LocalLake(tmp_path / "lake"), tmp_path, rng)
    m.run()
    for round_ in range(5):
        for _ in range(4):
            m.upload()
        new = {t: m.expected_kind(t, False)[1] for t in ("facts", "plain")}
        procs = [start_karet(m.lake, m.config, tmp_path) for _ in range(3)]
        outs = [p.communicate() for p in procs]
        assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
        summaries = [json.loads(o[0]) for o in outs]
        for t in ("facts", "plain"):
            # One run read the files (the new ones, or all for a full run); the
            # others found nothing new.
            got = sorted(s["tables"][t]["files_processed"] for s in summaries)
            assert got == [0, 0, new[t]], (t, got, [s["tables"][t] for s in summaries])
        resync(m)
