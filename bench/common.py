"""Shared pieces of the benchmarks: the data sets, timing, and running the
reference implementation (timelake==0.7.0) in its own virtualenv."""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REF_PYTHON = ROOT / ".venv-ref" / "bin" / "python"
sys.path.insert(0, str(ROOT / "tests" / "py"))


def metrics_table(n, start_us, seed=1):
    """n rows: a time column (10 ms apart), two series columns (100 hosts x 3
    regions) and five float64 metrics -- the shape of issue #2's benchmark."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    hosts = np.array([f"host_{i:03d}" for i in range(100)])
    regions = np.array(["eu-west-1", "us-east-1", "ap-south-1"])
    return pa.table(
        {
            "time": pa.array(start_us + np.arange(n, dtype=np.int64) * 10_000, pa.timestamp("us", tz="UTC")),
            "host": pa.array(hosts[rng.integers(0, 100, n)]),
            "region": pa.array(regions[rng.integers(0, 3, n)]),
            **{f"m{i}": pa.array(rng.random(n)) for i in range(5)},
        }
    )


def timed(fn, repeat):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out), out


def run_reference(script, *args):
    """Runs a benchmark script under the reference; it prints one JSON line."""
    # PYTHONPATH too: pointing at our build (build/python), it would make the
    # reference's side import our package.
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TL_LIB", "PYTHONPATH")}
    proc = subprocess.run([str(REF_PYTHON), script, *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"reference run failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def release_library():
    """Builds the optimised library (build/) and points the ctypes binding at it."""
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(ROOT / "build"), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(ROOT / "build")], check=True, stdout=subprocess.DEVNULL)
    os.environ["TL_LIB"] = str(ROOT / "build" / "libtimelake.so")


def holding_proxy(endpoint, hold_ms):
    """A recording proxy in front of endpoint (tests/py/fault_proxy.py, no
    faults) that holds every request hold_ms, as a distant store would: the
    round-trip counts are then exact. Use it as a context manager."""
    from fault_proxy import FaultProxy

    class HoldingProxy(FaultProxy):
        def _choose(self):
            return ("delay", hold_ms / 1000) if hold_ms else super()._choose()

    return HoldingProxy(endpoint)
