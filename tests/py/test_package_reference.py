"""The checks of package_contract.py run against the reference package
(timelake==0.7.0, in .venv-ref): whatever our package must do in common with
it, the reference does too. test_package.py runs the same checks on ours."""

import json
import os
import subprocess

import pytest

import package_contract
from conftest import REF_PYTHON


@pytest.fixture(scope="module")
def reference_results(tmp_path_factory):
    if not REF_PYTHON.exists():
        pytest.skip("the reference virtualenv .venv-ref is missing (scripts/setup.sh --test)")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "PYTHONPATH")}
    work = tmp_path_factory.mktemp("reference")
    proc = subprocess.run([str(REF_PYTHON), package_contract.__file__, str(work)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("check", sorted(package_contract.CHECKS))
def test_reference_passes(reference_results, check):
    assert reference_results[check] == "ok", reference_results[check]
