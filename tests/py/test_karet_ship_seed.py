"""`karet ship` beside the seed's example script (seeds/004, "Reading a log
file"), run as written -- `aws s3 cp` (awscli from PyPI) and `curl` -- on the
same scenarios, both against moto's S3 and one real `karet serve`. Where the
script loses or repeats lines the tests say so (README: "karet ship and the
seed's script"); karet ship must deliver every line exactly once in each."""

import os
import shutil
import subprocess
import sys
import time

import pytest

from karet_service import Server, jobs, make_pipeline
from ship_support import (AWSCLI_BIN, S3Dest, Shipper, append, event, lines, ndjson_config, seed_env, seed_script,
                          shipped_lines)
from store_servers import server_fixture

s3_server = pytest.fixture(scope="module")(server_fixture("s3"))


class Seed:
    """The seed's script for one log, its state in its own HOME."""

    def __init__(self, tmp, log, dest, url, backend):
        self.home = tmp / "seed-home"
        self.home.mkdir()
        self.log, self.dest = log, dest
        self.script = seed_script(tmp, log, dest.to, url)
        self.env = seed_env(self.home, backend)

    def __call__(self):
        time.sleep(1.05)  # as from cron: never two calls in one second (see the test of that)
        return subprocess.run([sys.executable, str(self.script)], capture_output=True, text=True, env=self.env,
                              timeout=300)

    def lose_state(self):
        os.unlink(self.home / ".karet-ship.json")


class Ours:
    def __init__(self, tmp, log, dest, url, backend):
        self.log, self.dest = log, dest
        self.state = tmp / "ours-state.json"
        self.ship = Shipper(log, dest.to, self.state, run_url=url, options=backend.options)

    def __call__(self):
        return self.ship()

    def lose_state(self):
        os.unlink(self.state)


@pytest.fixture
def pair(tmp_path, s3_server):
    if not (AWSCLI_BIN / "aws").exists() or shutil.which("curl") is None:
        pytest.skip("the seed's script needs aws (scripts/setup.d/awscli.sh) and curl")
    prefix = f"lake-{os.urandom(4).hex()}"
    srv = Server(tmp_path / "data", f"s3://{s3_server.bucket}/{prefix}", options=s3_server.options).start()
    out = {}
    for slug, cls in (("seed", Seed), ("web", Ours)):
        pp = f"pipelines/{slug}/events/"
        make_pipeline(srv.worker(), slug=slug, config=ndjson_config(prefix=pp))
        d = tmp_path / slug
        d.mkdir()
        out[slug] = cls(d, d / "events.log", S3Dest(s3_server, prefix, pp), f"{srv.base}/api/p/{slug}/jobs",
                        s3_server)
    yield out["seed"], out["web"], srv
    srv.stop()


def each(pair_, scenario):
    """Runs the scenario on both; returns what reached each lake."""
    seed, ours, _ = pair_
    scenario(seed)
    scenario(ours)
    return shipped_lines(seed.dest), shipped_lines(ours.dest)


def everything(n):
    return [event(k) for k in range(n)]


def test_appends_both_deliver_once(pair):
    def scenario(s):
        for r in range(3):
            append(s.log, lines(range(r * 10, r * 10 + 10)))
            assert s().returncode == 0
    seed, ours = each(pair, scenario)
    assert seed == everything(30) and ours == everything(30)


def test_half_written_line_both_hold_it_back(pair):
    def scenario(s):
        append(s.log, lines(range(5)) + event(5)[:10])
        assert s().returncode == 0
        append(s.log, event(5)[10:])
        assert s().returncode == 0
    seed, ours = each(pair, scenario)
    assert seed == everything(6) and ours == everything(6)


def test_rotation_once_both_finish_the_old_file(pair):
    def scenario(s):
        append(s.log, lines(range(10)))
        assert s().returncode == 0
        append(s.log, lines(range(10, 20)))
        os.rename(s.log, f"{s.log}.1")
        append(s.log, lines(range(20, 30)))
        assert s().returncode == 0
    seed, ours = each(pair, scenario)
    assert seed == everything(30) and ours == everything(30)


def test_rotation_twice_the_script_loses_the_old_tail_and_the_middle_file(pair):
    def scenario(s):
        append(s.log, lines(range(10)))
        assert s().returncode == 0
        append(s.log, lines(range(10, 20)))  # the old file's tail
        os.rename(s.log, f"{s.log}.1")
        append(s.log, lines(range(20, 30)))  # a whole file between the calls
        os.rename(f"{s.log}.1", f"{s.log}.2")
        os.rename(s.log, f"{s.log}.1")
        append(s.log, lines(range(30, 40)))
        assert s().returncode == 0
    seed, ours = each(pair, scenario)
    assert ours == everything(40)
    assert seed == [event(k) for k in [*range(10), *range(30, 40)]]  # 10-29 lost


def test_lost_state_the_script_sends_everything_again(pair):
    def scenario(s):
        append(s.log, lines(range(10)))
        assert s().returncode == 0
        s.lose_state()
        append(s.log, lines(range(10, 15)))
        assert s().returncode == 0
    seed, ours = each(pair, scenario)
    assert ours == everything(15)
    assert sorted(seed) == sorted(everything(10) * 2 + [event(k) for k in range(10, 15)])


def test_copytruncate_the_script_stalls_then_ships_from_mid_line(pair):
    def scenario(s):
        append(s.log, lines(range(10)))
        assert s().returncode == 0
        append(s.log, lines(range(10, 20)))
        shutil.copyfile(s.log, f"{s.log}.1")
        os.truncate(s.log, 0)
        append(s.log, lines(range(20, 25)))  # shorter than the old offset
        assert s().returncode == 0
        append(s.log, lines(range(25, 40)))  # now longer
        assert s().returncode == 0
    seed, ours = each(pair, scenario)
    assert ours == everything(40)
    assert len(seed) < 40 and not set(everything(40)) >= set(seed[10:])  # lines lost, a torn line sent


def test_run_url_down_the_script_uploads_the_same_lines_again(pair):
    seed, ours, srv = pair

    def scenario(s):
        append(s.log, lines(range(5)))
        assert s().returncode == 0
        url = s.script.read_text() if isinstance(s, Seed) else None
        if isinstance(s, Seed):
            s.script.write_text(url.replace("/api/p/seed/jobs", "/api/p/seed/jobz"))  # 404: request fails
        else:
            s.ship.run_url = s.ship.run_url.replace("/jobs", "/jobz")
        append(s.log, lines(range(5, 10)))
        assert s().returncode != 0
        if isinstance(s, Seed):
            s.script.write_text(url)
        else:
            s.ship.run_url = s.ship.run_url.replace("/jobz", "/jobs")
        assert s().returncode == 0
    seed_lines, ours_lines = each(pair, scenario)
    assert ours_lines == everything(10)
    assert sorted(seed_lines) == sorted(everything(5) + [event(k) for k in range(5, 10)] * 2)
    assert len([j for j in jobs(srv.worker(), "web") if j["trigger"] == "manual"]) == 2
