"""A home that cannot be written, a disk that is full, and a home another server is serving.

Each runs the real CLI as a child process over a copy of the seed index (real MiniLM, real
Chroma) and knowledge the test writes:

- a read-only home (`chmod -R a-w`, the process without the capabilities that let root ignore
  file modes): `ask` answers and writes nothing in the home; searching Chroma, it says once that it
  searches a copy of Chroma's folder; searching the small index's own copy of its vectors, it needs none;
- a full disk (a 12 MB tmpfs in a private mount namespace, filled): the start-up sync for changed
  knowledge fails in one line saying what is full and how much a sync needs, and `ask` still
  answers from the last committed index;
- one home, one knowledge: while `assistant serve` runs on a home, `ask` naming other knowledge
  there refuses in one line; with the same knowledge it answers; once the server is gone it syncs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.index.exact_vectors import discard
from tests.conftest import REPO, SEED
from tests.processes import free_port, reap
from tests.test_startup import cli_env

pytestmark = pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")
QUESTION = "What is a GPU?"
# as the CLI prints it: the marker numbered, the entry listed below as [1]
DEFINITION = "A processor designed for highly parallel workloads, widely used for tensor computation [1]."
# root ignores file modes through these capabilities; without them it meets them like any user
DROP_OVERRIDES = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def knowledge_copy(folder: Path, extra: bool = False) -> Path:
    """The seed knowledge written into `folder`, with one more page when `extra`."""
    shutil.copytree(SEED, folder)
    if extra:
        (folder / "999_nvlink.txt").write_text(
            "Systems · EXT-0001\nNVLink\nA high-bandwidth link between the GPUs of one server.\n", encoding="utf-8"
        )
    return folder


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}:{stat.st_mode}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def run_cli(env: dict[str, str], *argv: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [*(prefix or []), sys.executable, "-m", "assistant", *argv]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and "RuntimeWarning" not in line]


@pytest.fixture
def built(seed_home: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the seed index and the knowledge it was built from, both written here."""
    knowledge = knowledge_copy(tmp_path / "knowledge")
    home = tmp_path / "home"
    shutil.copytree(seed_home, home)
    done = run_cli(cli_env(home, knowledge), "index")  # the index now names this copy of the knowledge
    assert done.returncode == 0, done.stderr
    return home, knowledge


def read_only_prefix() -> list[str] | None:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    probe = subprocess.run([*DROP_OVERRIDES, "true"], capture_output=True)
    return DROP_OVERRIDES if probe.returncode == 0 else None


def ask_read_only(
    home: Path, knowledge: Path, prefix: list[str], changed: bool
) -> tuple[subprocess.CompletedProcess[str], list[str], bool]:
    """`ask` on `home` made read-only, after the knowledge gained a page when `changed`: the run, its warning
    lines and whether the home is as it was; the home is writable again afterwards."""
    if changed:
        (knowledge / "999_nvlink.txt").write_text("Systems · EXT-0001\nNVLink\nA link between GPUs.\n", "utf-8")
    subprocess.run(["chmod", "-R", "a-w", str(home)], check=True)
    before = tree_digest(home)
    try:
        done = run_cli(cli_env(home, knowledge), "ask", QUESTION, prefix=prefix)
        return done, warnings_of(done.stderr), tree_digest(home) == before
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(home)], check=True)


@pytest.mark.parametrize("changed", [False, True], ids=["up to date", "knowledge changed"])
def test_a_read_only_home_answers_and_writes_nothing(built: tuple[Path, Path], tmp_path: Path, changed: bool) -> None:
    prefix = read_only_prefix()
    if prefix is None:
        pytest.skip("running as root without setpriv: file modes cannot be enforced")
    home, knowledge = built
    discard(home / "index" / "cache")  # without the vectors' copy, Chroma is searched (`exact_vectors`)
    done, lines, unchanged = ask_read_only(home, knowledge, prefix, changed)
    assert done.returncode == 0, done.stderr
    assert DEFINITION in done.stdout and "rebuild" not in done.stderr
    assert any("cannot be written (the home is read-only): searching a copy in" in line for line in lines), lines
    if changed:  # the sync could not run: said once, and the last index answers
        assert any("answering from the index as it was" in line for line in lines), lines
    assert len(lines) == (2 + changed if changed else 1), lines
    assert unchanged


@pytest.mark.parametrize("changed", [False, True], ids=["up to date", "knowledge changed"])
def test_a_read_only_home_with_the_vectors_copy_answers_without_opening_chroma(
    built: tuple[Path, Path], changed: bool
) -> None:
    """The seed index keeps a copy of its vectors (`exact_vectors`): a read-only home answers from it as
    Chroma would, with no copy of Chroma's folder to make and nothing to say about it."""
    prefix = read_only_prefix()
    if prefix is None:
        pytest.skip("running as root without setpriv: file modes cannot be enforced")
    home, knowledge = built
    assert list((home / "index" / "cache").glob("vectors-*"))
    done, lines, unchanged = ask_read_only(home, knowledge, prefix, changed)
    assert done.returncode == 0, done.stderr
    assert DEFINITION in done.stdout and "rebuild" not in done.stderr
    assert not any("searching a copy" in line for line in lines), lines
    if changed:  # the sync could not run: said once, and the last index answers
        assert any("answering from the index as it was" in line for line in lines), lines
    assert len(lines) == (2 if changed else 0), lines
    assert unchanged


FULL_DISK = """
set -e
mount -t tmpfs -o size=12m tmpfs "$MOUNT"
cp -r "$BUILT/." "$MOUNT/"
dd if=/dev/zero of="$MOUNT/filler" bs=1M count=64 2>/dev/null || true
exec "$PYTHON" -m assistant ask "$QUESTION"
"""


def test_a_full_disk_keeps_the_last_index_answering(built: tuple[Path, Path], tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a full disk is made with a tmpfs in a private mount namespace: needs root and unshare")
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no private mount namespace here")
    home, knowledge = built
    (knowledge / "999_nvlink.txt").write_text("Systems · EXT-0001\nNVLink\nA link between GPUs.\n", "utf-8")
    mount = tmp_path / "full"
    mount.mkdir()
    env = cli_env(mount, knowledge, BUILT=str(home), MOUNT=str(mount), PYTHON=sys.executable, QUESTION=QUESTION)
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", FULL_DISK], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert DEFINITION in done.stdout
    full = [line for line in warnings_of(done.stderr) if "The disk is full" in line]
    assert len(full) == 1 and "a sync needs about" in full[0] and "answering from the index as it was" in full[0]


@pytest.mark.server
def test_a_home_served_with_other_knowledge_is_not_synced_under_the_server(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    home, knowledge = built
    other = knowledge_copy(tmp_path / "other", extra=True)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "assistant", "serve", "--port", str(port)],
        cwd=REPO,
        env=cli_env(home, knowledge),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("Ready:")
        refused = run_cli(cli_env(home, other), "ask", QUESTION)
        assert refused.returncode == 1 and refused.stdout == ""
        lines = warnings_of(refused.stderr)
        assert len(lines) == 1 and f"is being served by process {server.pid} with other knowledge" in lines[0], lines
        doctor = run_cli(cli_env(home, other), "doctor")
        assert f"problem: server: process {server.pid} serves this home with other knowledge" in doctor.stdout
        same = run_cli(cli_env(home, knowledge), "ask", QUESTION)
        assert same.returncode == 0 and DEFINITION in same.stdout, same.stderr
    finally:
        server.terminate()
        server.communicate(timeout=30)
        reap(server)
    # a server killed by a signal leaves its marker: its pid no longer runs, so it holds nothing back
    synced = run_cli(cli_env(home, other), "ask", "What is NVLink?")
    assert synced.returncode == 0 and "EXT-0001" in synced.stdout, synced.stderr
