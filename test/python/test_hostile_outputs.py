"""A second local user (nobody, through setpriv) plants links, FIFOs and look-alike dumps where
root's traced program will write (issue 48): nothing of root's is overwritten, nothing of the
user's deleted, and the program runs to its normal end with one `gpuprobe:` line. Needs root
(CI runs as root) and util-linux's setpriv; otherwise skipped, saying why."""

import os
import pathlib
import shutil
import stat
import subprocess

import pytest

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
PROGRAM = BUILD / "examples" / "env_traced"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="planting as another user needs root"),
    pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) not found"),
]


def as_nobody(*argv, cwd):
    """Runs argv as uid/gid 65534: the hostile local user."""
    subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv],
                   cwd=cwd, check=True)


@pytest.fixture
def shared_dir(tmp_path):
    """A directory both users write, sticky as /tmp is."""
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o1777)
    return d


@pytest.fixture
def victim(tmp_path):
    v = tmp_path / "root_only"
    v.write_text("root's secret\n")
    v.chmod(0o600)
    return v


def run_traced(config, cwd):
    if not PROGRAM.exists():
        pytest.skip(f"{PROGRAM} not built")
    env = dict(os.environ, GPUPROBE=config)
    env.pop("GPUPROBE_OWNER_PID", None)
    return subprocess.run([str(PROGRAM.resolve())], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("key", ["chrome", "perfetto", "metrics_file"])
def test_a_link_planted_by_another_user_is_not_written_through(shared_dir, victim, key):
    as_nobody("ln", "-s", str(victim), "out.file", cwd=shared_dir)
    done = run_traced(f"{key}=out.file", shared_dir)
    assert done.returncode == 0, done.stderr
    assert "symbolic link of another user (uid 65534)" in done.stderr
    assert victim.read_text() == "root's secret\n"
    assert (shared_dir / "out.file").is_symlink()


def test_a_fifo_planted_by_another_user_is_refused_at_once(shared_dir):
    as_nobody("mkfifo", "-m", "666", "trace.json", cwd=shared_dir)
    done = run_traced("chrome=trace.json", shared_dir)
    assert done.returncode == 0, done.stderr
    assert "FIFO of another user" in done.stderr
    assert stat.S_ISFIFO((shared_dir / "trace.json").lstat().st_mode)


def test_the_disk_cap_leaves_another_users_look_alike_dumps_alone(shared_dir):
    dumps = shared_dir / "dumps"
    dumps.mkdir()
    dumps.chmod(0o1777)
    # Named as a dump, with dump.json's marker: still not root's gpuprobe's to delete.
    fake = "gpuprobe_dump_20000101T000000.000Z_h_pid1"
    as_nobody("mkdir", fake, cwd=dumps)
    as_nobody("sh", "-c", f"printf '{{\\n  \"format\": \"gpuprobe-dump\"' > {fake}/dump.json",
              cwd=dumps)
    as_nobody("sh", "-c", f"head -c 2000000 /dev/zero > {fake}/data", cwd=dumps)
    as_nobody("mkdir", "results", cwd=dumps)
    as_nobody("sh", "-c", "echo '{}' > results/dump.json", cwd=dumps)
    config = (f"flight=5,dump={dumps},dump_max_mb=1,trigger=slow:main>1us,dump_after=0,"
              "dump_cooldown=0")
    done = run_traced(config, shared_dir)
    assert done.returncode == 0, done.stderr
    assert "dump written" in done.stderr
    assert (dumps / fake / "data").stat().st_size == 2000000
    assert (dumps / "results" / "dump.json").exists()
