"""Run one (claim, variant, size, repeat) in a fresh, limited subprocess; never import TensorFlow here."""

from __future__ import annotations

import json
import os
import signal as _signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from .claims import Claim

CHILD = Path(__file__).with_name("_child.py")
_ACTIVE: set[int] = set()  # process groups of the measurements now running
_ACTIVE_LOCK = threading.Lock()


def _track(pgid: int, running: bool) -> None:
    with _ACTIVE_LOCK:
        (_ACTIVE.add if running else _ACTIVE.discard)(pgid)


def _kill_active() -> None:
    with _ACTIVE_LOCK:
        groups = list(_ACTIVE)
    for pgid in groups:
        try:
            os.killpg(pgid, _signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@dataclass
class Task:
    claim: Claim
    variant: str  # "bad" or "good"
    size: float
    repeat: int

    @property
    def fixture(self) -> Path:
        return self.claim.bad if self.variant == "bad" else self.claim.good

    def label(self) -> str:
        return f"{self.claim.id} {self.variant} {self.claim.size_name}={self.size:g}"


@dataclass
class Run:
    task: Task
    value: object = None
    error: str | None = None
    output: str = ""
    wall_s: float = 0.0
    workload_s: float | None = None
    extra: dict = field(default_factory=dict)
    aux: dict = field(default_factory=dict)  # the auxiliary signals (seconds, alloc_peak, traces...)
    tf_version: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _tail(path: Path, limit: int = 1500) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    text = data[-limit:].decode("utf-8", "replace")
    return text if len(data) <= limit else "..." + text


def child_env(gpu: bool = False) -> dict:
    """The environment of a measurement: no GPU (CPU claims measure the CPU allocator), unless the
    claim requires one (then the user's own CUDA_VISIBLE_DEVICES, if any, is kept)."""
    env = dict(os.environ)
    env.update({
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "TF_CPU_ALLOCATOR_USE_BFC": "true",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TF_ENABLE_ONEDNN_OPTS": env.get("TF_ENABLE_ONEDNN_OPTS", "0"),
        "KERAS_BACKEND": "tensorflow",
    })
    if not gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


class Zygote:
    """A subprocess that imports TensorFlow once and forks a fresh child per task (see _child.py).

    Each child is a new process (own pid, own session, own address-space limit and time limit)
    started from the state right after ``import tensorflow``: it saves the ~2-9 s import per task."""

    def __init__(self, python: str = sys.executable, start_timeout: float = 180.0):
        self.proc = subprocess.Popen(
            [python, str(CHILD), "--zygote"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=child_env(), text=True, bufsize=1, start_new_session=True,
        )
        self.lock = threading.Lock()
        self.pending: dict[int, dict] = {}
        self.next_id = 0
        self.ready = threading.Event()
        self.dead = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.ready.wait(start_timeout) or self.dead:
            self.close()
            raise RuntimeError("the TensorFlow zygote did not start")

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("ready"):
                self.ready.set()
                continue
            with self.lock:
                slot = self.pending.get(msg.get("id"))
            if slot is None:
                continue
            if "pid" in msg:
                slot["pid"] = msg["pid"]
                slot["started"].set()
            if "rc" in msg:
                slot["rc"] = msg["rc"]
                slot["done"].set()
        self.dead = True
        self.ready.set()
        with self.lock:
            for slot in self.pending.values():
                slot["started"].set()
                slot["done"].set()

    def start(self, spec: dict, out: Path, log: Path, cwd: Path) -> dict:
        with self.lock:
            rid = self.next_id
            self.next_id += 1
            slot = {"id": rid, "pid": None, "rc": None,
                    "started": threading.Event(), "done": threading.Event()}
            self.pending[rid] = slot
            if self.dead:
                raise RuntimeError("the TensorFlow zygote has exited")
            self.proc.stdin.write(json.dumps({"id": rid, "spec": spec, "out": str(out),
                                              "log": str(log), "cwd": str(cwd)}) + "\n")
            self.proc.stdin.flush()
        slot["started"].wait(60)
        if slot["pid"] is None:
            raise RuntimeError("the TensorFlow zygote did not fork")
        return slot

    def close(self) -> None:
        with self.lock:
            pids = [s["pid"] for s in self.pending.values() if s["pid"] and not s["done"].is_set()]
        for pid in pids:
            try:
                os.killpg(pid, _signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, _signal.SIGKILL)
            self.proc.wait()


def _spec(task: Task, tmpdir: Path | None = None) -> dict:
    claim = task.claim
    size = int(task.size) if float(task.size).is_integer() else task.size
    warmup = claim.warmup
    if warmup is not None and float(warmup).is_integer():
        warmup = int(warmup)
    gpu = claim.needs_gpu
    return {
        "tmpdir": str(tmpdir) if tmpdir else None,
        "fixture": str(task.fixture), "signal": claim.signal, "size": size, "warmup": warmup,
        "gpu": gpu,  # no address-space limit (CUDA maps more), the runtime left to the workload
        "memory_limit_bytes": 0 if gpu else claim.memory_limit_mib * 2**20,
        "inter_op_threads": claim.inter_op_threads, "intra_op_threads": claim.intra_op_threads,
    }


def run_task_forked(task: Task, zygote: Zygote) -> Run:
    """Like run_task, in a child forked from the zygote."""
    run = Run(task)
    if not task.fixture.is_file():
        run.error = f"fixture not found: {task.fixture}"
        return run
    claim = task.claim
    with tempfile.TemporaryDirectory(prefix="tfm-verify-") as tmp:
        tmpdir = Path(tmp)
        result_path, log_path = tmpdir / "result.json", tmpdir / "output.log"
        t0 = time.monotonic()
        try:
            slot = zygote.start(_spec(task, tmpdir), result_path, log_path, tmpdir)
        except RuntimeError as exc:
            run.error = f"could not start the measurement: {exc}"
            return run
        _track(slot["pid"], True)
        try:
            finished = slot["done"].wait(claim.timeout_s)
        finally:
            _track(slot["pid"], False)
        if not finished:
            try:
                os.killpg(slot["pid"], _signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            slot["done"].wait(10)
            run.wall_s = time.monotonic() - t0
            run.error = (f"timed out after {claim.timeout_s:g} s (time limit); "
                         "the process group was killed")
            run.output = _tail(log_path)
            return run
        try:  # grandchildren the fixture may have left behind
            os.killpg(slot["pid"], _signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        run.wall_s = time.monotonic() - t0
        return _finish(run, slot["rc"], result_path, log_path)


def _finish(run: Run, rc, result_path: Path, log_path: Path) -> Run:
    claim = run.task.claim
    run.output = _tail(log_path)
    result = None
    if result_path.exists():
        try:
            result = json.loads(result_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result = None
    if result is not None and "error" in result:
        run.error = result["error"]
        if result.get("traceback"):
            run.output = (result["traceback"] + "\n" + run.output).strip()
        return run
    if result is None or rc != 0:
        run.error = _describe_exit(rc, run.output, claim.memory_limit_mib)
        return run
    run.value = result["value"]
    run.workload_s = result.get("seconds")
    run.extra = result.get("extra", {})
    run.aux = result.get("aux", {})
    run.tf_version = result.get("tf_version")
    return run


def run_task(task: Task, python: str = sys.executable) -> Run:
    claim = task.claim
    run = Run(task)
    if not task.fixture.is_file():
        run.error = f"fixture not found: {task.fixture}"
        return run
    with tempfile.TemporaryDirectory(prefix="tfm-verify-") as tmp:
        tmpdir = Path(tmp)
        spec = _spec(task, tmpdir)
        env = child_env(gpu=claim.needs_gpu)
        env["TMPDIR"] = str(tmpdir)
        result_path, log_path = tmpdir / "result.json", tmpdir / "output.log"
        t0 = time.monotonic()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [python, str(CHILD), json.dumps(spec), str(result_path)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=tmpdir,
                env=env, start_new_session=True,
            )
            _track(proc.pid, True)
            try:
                rc = proc.wait(timeout=claim.timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                run.wall_s = time.monotonic() - t0
                run.error = (f"timed out after {claim.timeout_s:g} s (time limit); "
                             "the process group was killed")
                run.output = _tail(log_path)
                return run
            finally:
                _track(proc.pid, False)
                if proc.poll() is None:  # interrupted (KeyboardInterrupt...): never leave it running
                    _kill_group(proc)
            _kill_group(proc)  # grandchildren the fixture may have left behind
        run.wall_s = time.monotonic() - t0
        return _finish(run, rc, result_path, log_path)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, _signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _describe_exit(rc: int | None, output: str, limit_mib: int) -> str:
    markers = ("MemoryError", "bad_alloc", "Cannot allocate memory", "OOM", "ResourceExhausted",
               "out of memory", "std::bad_alloc")
    oomish = any(s in output for s in markers)
    if rc is not None and rc < 0:
        name = _signal.Signals(-rc).name if -rc in _signal.Signals._value2member_map_ else str(-rc)
        reason = f"crashed: killed by signal {name}"
    else:
        reason = f"crashed: exited with status {rc} and no result"
    if oomish:
        reason += f" (out of memory: address-space limit {limit_mib} MiB)"
    return reason


class Progress:
    """A plain-text progress bar on stderr (redrawn in place on a terminal, a line per 10% otherwise)."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.enabled = enabled and total > 0
        self.t0 = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last_decile = -1
        self.lock = threading.Lock()

    def grow(self, extra: int) -> None:
        with self.lock:
            self.total += extra

    def step(self, label: str, failed: bool = False) -> None:
        with self.lock:
            self.done += 1
            if not self.enabled:
                return
            width = 30
            filled = int(width * self.done / self.total)
            elapsed = time.monotonic() - self.t0
            line = (f"verify [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                    f"{elapsed:5.0f}s  {label}{'  ERROR' if failed else ''}")
            if self.tty:
                self.stream.write("\r\x1b[K" + line[:150])
                if self.done == self.total:
                    self.stream.write("\n")
            else:
                decile = (10 * self.done) // self.total
                if decile != self.last_decile or failed:
                    self.last_decile = decile
                    self.stream.write(line + "\n")
            self.stream.flush()


def runs_alone(claim: Claim) -> bool:
    """Noisy signals (rss, seconds) and claims that use a GPU run with nothing else of this
    verifier (or, through the machine lock, of another one) measuring next to them."""
    return not claim.deterministic or claim.needs_gpu


def plan(claims: list[Claim]) -> list[Task]:
    """The first round of tasks: every (claim, size, variant, repeat), variants interleaved."""
    return [Task(c, v, s, r) for c in claims for r in range(c.repeats) for s in c.sizes
            for v in ("bad", "good")]


class MachineLock:
    """A machine-wide reader-writer lock shared by every ``tf-memlint verify`` on this machine.

    Deterministic measurements take it shared (several may run at once); noisy ones (rss,
    seconds) take it exclusively, so no other verifier's measurement runs next to them. A
    turnstile keeps a waiting writer from being starved by a stream of readers. Advisory
    (flock): it only orders verifiers, not the rest of the machine's load."""

    def __init__(self, path: Path | None = None):
        base = Path(path) if path else Path(tempfile.gettempdir()) / "tf-memlint-verify"
        self.paths = (base.with_suffix(".turnstile.lock"), base.with_suffix(".lock"))
        self.enabled = True
        try:
            import fcntl  # noqa: F401  (POSIX only)
        except ImportError:
            self.enabled = False

    def _open(self, path: Path) -> int:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            os.chmod(path, 0o666)
        except OSError:
            pass
        return fd

    def acquire(self, exclusive: bool):
        if not self.enabled:
            return None
        import fcntl

        try:
            turn, rw = self._open(self.paths[0]), self._open(self.paths[1])
        except OSError:
            return None  # an unwritable temp dir: run unlocked rather than not at all
        fcntl.flock(turn, fcntl.LOCK_EX)
        try:
            fcntl.flock(rw, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turn, fcntl.LOCK_UN)
            os.close(turn)
        return rw

    @staticmethod
    def release(fd) -> None:
        if fd is None:
            return
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def run_all(claims: list[Claim], jobs: int = 2, progress: bool = True,
            python: str = sys.executable, fork: bool = True, more=None,
            lock: MachineLock | None = None) -> list[Run]:
    """Run every task and return the runs in plan order.

    Deterministic signals run ``jobs`` at a time. Noisy signals (rss, seconds) and claims that use
    a GPU run one at a time, alone: nothing else of this verifier (and, through the machine lock,
    of any other verifier on this machine) measures next to them. After each round of such a
    claim, ``more(claim, runs)`` says whether another repeat is needed (the verdict is not yet
    decided and the claim's ``max_repeats`` is not reached). With ``fork`` (the default) each task
    is a child forked from a zygote that imported TensorFlow once; without it, and always for a
    claim that uses a GPU (the zygote's environment hides the GPU), each task is a new interpreter.
    A claim whose ``requires`` does not hold on this machine (requirements.py) is not run at all:
    it gets no runs, and ``verdict.evaluate`` says it is not measurable here."""
    from .requirements import unmet

    lock = lock or MachineLock()
    claims = [c for c in claims if unmet(c) is None]
    quiet = [c for c in claims if not runs_alone(c)]
    noisy = [c for c in claims if runs_alone(c)]
    tasks = plan(quiet)
    noisy_tasks = plan(noisy)
    bar = Progress(len(tasks) + len(noisy_tasks), enabled=progress)
    runs: list[Run] = []
    zygote = None
    if fork and hasattr(os, "fork") and any(not c.needs_gpu for c in claims):
        try:
            zygote = Zygote(python)
        except (RuntimeError, OSError):
            zygote = None  # fall back to one interpreter per task

    def one(task: Task, exclusive: bool) -> Run:
        held = lock.acquire(exclusive)
        try:
            if zygote is not None and not task.claim.needs_gpu:
                return run_task_forked(task, zygote)
            return run_task(task, python)
        finally:
            MachineLock.release(held)

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = {pool.submit(one, t, False): t for t in tasks}
        for fut in as_completed(futures):
            run = fut.result()
            runs.append(run)
            bar.step(run.task.label(), failed=not run.ok)
        for claim in noisy:
            mine = []
            for task in plan([claim]):
                run = one(task, True)
                mine.append(run)
                bar.step(task.label(), failed=not run.ok)
            repeat = claim.repeats
            while (more is not None and repeat < claim.max_repeats
                   and all(r.ok for r in mine) and more(claim, mine)):
                extra = [Task(claim, v, s, repeat) for s in claim.sizes for v in ("bad", "good")]
                bar.grow(len(extra))
                for task in extra:
                    run = one(task, True)
                    mine.append(run)
                    bar.step(task.label() + f" (repeat {repeat + 1})", failed=not run.ok)
                repeat += 1
            runs.extend(mine)
    except BaseException:  # Ctrl-C: stop queued work, kill what runs, leave nothing behind
        pool.shutdown(wait=False, cancel_futures=True)
        _kill_active()
        raise
    finally:
        pool.shutdown(wait=True)
        if zygote is not None:
            zygote.close()
    order = {id(c): i for i, c in enumerate(claims)}
    runs.sort(key=lambda r: (order[id(r.task.claim)], r.task.repeat, r.task.claim.sizes.index(r.task.size),
                             r.task.variant != "bad"))
    return runs
