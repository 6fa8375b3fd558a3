"""The measuring side of the runtime verifier: one (claim, variant, size) in one fresh process.

Run as a script, never imported by the parent:  python _child.py SPEC_JSON RESULT_PATH
(``--zygote``: fork one such child per request; ``--gpus``: print how many GPUs TensorFlow lists).

It limits its own address space first, then imports TensorFlow, imports the fixture by path,
calls ``workload(n)`` under the requested signal and writes one JSON object to RESULT_PATH:
``{"value": ..., "seconds": ..., "extra": {...}}`` or ``{"error": "...", "kind": "..."}``.
This file must stay standalone (stdlib + TensorFlow only): it runs outside the package.
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import json
import os
import resource
import signal
import sys
import time
import traceback


def _write(path: str, payload: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(payload, fh)


def _trim() -> None:
    gc.collect()
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _load_fixture(path: str):
    spec = importlib.util.spec_from_file_location("tfm_fixture", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tfm_fixture"] = module
    spec.loader.exec_module(module)
    return module


def _graph_def(tf, obj):
    """Turn what a graph-signal workload returned into a GraphDef."""
    if isinstance(obj, tuple) and len(obj) == 2 and callable(obj[0]):
        fn, args = obj
        obj = fn.get_concrete_function(*args)
    if hasattr(obj, "graph") and hasattr(obj.graph, "as_graph_def"):  # ConcreteFunction
        obj = obj.graph
    if isinstance(obj, tf.Graph):
        return obj.as_graph_def()
    if hasattr(obj, "library") and hasattr(obj, "node"):
        return obj
    raise TypeError(
        "a graph signal needs workload(n) to return (tf_function, args), a ConcreteFunction, "
        f"a tf.Graph or a GraphDef, got {'None' if obj is None else type(obj).__name__}"
    )


def _count_eager_tensors(tf) -> int:
    gc.collect()
    eager = tf.__internal__.EagerTensor if hasattr(tf.__internal__, "EagerTensor") else None
    if eager is None:
        from tensorflow.python.framework.ops import EagerTensor as eager  # noqa: N813
    return sum(1 for o in gc.get_objects() if type(o) is eager)


class _TraceCounter:
    """Counts tf.function tracings (each one builds a new ConcreteFunction graph)."""

    def __init__(self):
        from tensorflow.python.eager.polymorphic_function import tracing_compilation as tc  # noqa: PLC0415

        self.count = 0
        self._module = tc
        original = tc._create_concrete_function  # pylint: disable=protected-access

        def counting(*args, **kwargs):
            self.count += 1
            return original(*args, **kwargs)

        tc._create_concrete_function = counting  # pylint: disable=protected-access


class _Aux:
    """The auxiliary signals every measurement records next to its own (premises test them):
    wall time, allocator peak above the level before the call, tf.function tracings."""

    def __init__(self, tf, counter, runtime: bool = True):
        self.tf, self.counter = tf, counter
        self.runtime = runtime  # False: never start TensorFlow's runtime here (a GPU claim's workers use it)
        self.base = None
        self.traces0 = counter.count if counter else None

    def start(self):
        self.traces0 = self.counter.count if self.counter else None
        if not self.runtime:
            return
        try:
            self.tf.config.experimental.reset_memory_stats("CPU:0")
            self.base = self.tf.config.experimental.get_memory_info("CPU:0")["current"]
        except Exception:  # noqa: BLE001 - no allocator statistics (graph mode...): leave it out
            self.base = None

    def finish(self, seconds: float, graph_built: bool = False) -> dict:
        aux: dict = {"seconds": seconds}
        if self.base is not None:
            try:
                aux["alloc_peak"] = self.tf.config.experimental.get_memory_info("CPU:0")["peak"] - self.base
            except Exception:  # noqa: BLE001
                pass
        if self.counter is not None and self.traces0 is not None:
            aux["traces"] = self.counter.count - self.traces0
        if self.runtime:  # without allocator statistics, "no TensorFlow work" cannot be told
            aux["tf_work"] = int(graph_built or aux.get("alloc_peak", 0) > 0 or aux.get("traces", 0) > 0)
        return aux


def _number_result(value, n):
    """The value of the ``returned`` signal: a finite number (bools count as 0/1)."""
    import math

    if value is None:
        raise _SignalError(f"workload({n}) returned None: the 'returned' signal needs it to return "
                           "a number (int, float or bool), e.g. the counter the claim is about")
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise _SignalError(f"workload({n}) returned {value}: the 'returned' signal needs a finite number")
        return value
    try:  # a 0-d tensor or NumPy scalar
        number = float(value)
    except (TypeError, ValueError):
        raise _SignalError(f"workload({n}) returned a {type(value).__name__}: the 'returned' signal "
                           "needs a number (int, float or bool)") from None
    if not math.isfinite(number):
        raise _SignalError(f"workload({n}) returned {number}: the 'returned' signal needs a finite number")
    return number


class _SignalError(Exception):
    """What workload(n) returned cannot be measured by the claim's signal (not the workload's fault)."""


def _oom_message(exc, limit: int) -> str:
    text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return ("out of memory: TensorFlow could not allocate a tensor (ResourceExhaustedError"
            + (f": {text}" if text else "") + ")"
            + (f"; the address-space limit is {limit / 2**30:.1f} GiB (memory_limit_mib)" if limit > 0
               else "; no address-space limit was set"))


def measure(spec: dict, out: str) -> int:
    """Measure one (claim, variant, size): write the result (or the error) to ``out``."""
    limit = int(spec.get("memory_limit_bytes") or 0)
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    tmp = spec.get("tmpdir")
    if tmp:  # AutoGraph writes __autograph_generated_file*.py into the temp dir: use ours
        import tempfile

        os.environ["TMPDIR"] = tmp
        tempfile.tempdir = tmp
    signal = spec["signal"]
    n = spec["size"]
    warmup = spec.get("warmup")
    try:
        import tensorflow as tf  # noqa: PLC0415
    except MemoryError:
        _write(out, {"error": "out of memory while importing TensorFlow "
                              "(raise memory_limit_mib)", "kind": "oom"})
        return 3
    threads = spec.get("inter_op_threads")
    if threads:
        tf.config.threading.set_inter_op_parallelism_threads(int(threads))
    intra = spec.get("intra_op_threads")
    if intra:
        tf.config.threading.set_intra_op_parallelism_threads(int(intra))

    try:
        module = _load_fixture(spec["fixture"])
    except MemoryError:
        _write(out, {"error": "out of memory while importing the fixture", "kind": "oom"})
        return 3
    except BaseException as exc:  # noqa: BLE001 - any import failure is the fixture's fault
        _write(out, {"error": f"cannot import the fixture: {type(exc).__name__}: {exc}",
                     "kind": "import", "traceback": traceback.format_exc(limit=5)})
        return 3
    workload = getattr(module, "workload", None)
    if not callable(workload):
        _write(out, {"error": "the fixture defines no workload(n) function", "kind": "import"})
        return 3

    extra: dict = {}
    result = None
    try:
        counter = _TraceCounter()
    except Exception:  # noqa: BLE001 - a TensorFlow without that internal: no trace counts
        counter = None
        if signal == "traces":
            _write(out, {"error": "cannot count tf.function tracings in this TensorFlow version",
                         "kind": "spec"})
            return 3
    aux = _Aux(tf, counter, runtime=not spec.get("gpu"))
    graph_built = False
    try:
        if warmup is not None:
            workload(warmup)  # its result is dropped before the measurement
        value = None
        if signal in ("graph_nodes", "graphdef_bytes", "graph_ops"):
            aux.start()
            t0 = time.perf_counter()
            result = workload(n)
            seconds = time.perf_counter() - t0
            if signal == "graph_ops":
                graph = result if isinstance(result, tf.Graph) else getattr(result, "graph", None)
                if not isinstance(graph, tf.Graph):
                    raise _SignalError("graph_ops needs workload(n) to return a tf.Graph "
                                       f"(or an object with .graph), got {_type_name(result)}")
                value = len(graph.get_operations())
            else:
                try:
                    gd = _graph_def(tf, result)
                except TypeError as exc:
                    raise _SignalError(str(exc)) from None
                nodes = len(gd.node) + sum(len(f.node_def) for f in gd.library.function)
                extra = {"graph_nodes": nodes, "graphdef_bytes": gd.ByteSize()}
                value = extra[signal]
            graph_built = True
        elif signal == "traces":
            aux.start()
            t0 = time.perf_counter()
            result = workload(n)
            seconds = time.perf_counter() - t0
            value = aux.counter.count - aux.traces0
        elif signal in ("alloc_peak", "alloc_held"):
            _trim()
            aux.start()
            base = aux.base
            if base is None:
                raise _SignalError("the CPU allocator keeps no statistics here "
                                   "(tf.config.experimental.get_memory_info failed)")
            t0 = time.perf_counter()
            result = workload(n)
            seconds = time.perf_counter() - t0
            info = tf.config.experimental.get_memory_info("CPU:0")
            if signal == "alloc_peak":
                value = info["peak"] - base
            else:
                _trim()
                value = tf.config.experimental.get_memory_info("CPU:0")["current"] - base
            extra = {"base": base, "peak": info["peak"], "current_after": info["current"]}
        elif signal == "live_tensors":
            before = _count_eager_tensors(tf)
            aux.start()
            t0 = time.perf_counter()
            result = workload(n)
            seconds = time.perf_counter() - t0
            value = _count_eager_tensors(tf) - before
        elif signal == "rss":
            aux.start()
            _trim()
            before = _rss_bytes()
            t0 = time.perf_counter()
            result = workload(n)
            seconds = time.perf_counter() - t0
            _trim()
            value = _rss_bytes() - before
            extra = {"rss_before": before}
        elif signal == "seconds":
            aux.start()
            _trim()
            t0 = time.perf_counter()
            result = workload(n)
            seconds = time.perf_counter() - t0
            value = seconds
        elif signal == "returned":
            aux.start()
            t0 = time.perf_counter()
            result = workload(n)
            seconds = time.perf_counter() - t0
            value = _number_result(result, n)
        elif signal == "exception":
            aux.start()
            t0 = time.perf_counter()
            try:
                result = workload(n)
                value = "none"
            except (MemoryError, tf.errors.ResourceExhaustedError):
                raise
            except Exception as exc:  # noqa: BLE001 - the exception is the measurement
                value = type(exc).__name__
                extra = {"message": str(exc)[:300]}
            seconds = time.perf_counter() - t0
        else:
            _write(out, {"error": f"unknown signal {signal!r}", "kind": "spec"})
            return 3
    except MemoryError:
        _write(out, {"error": "out of memory: the fixture hit the address-space limit of "
                              f"{limit / 2**30:.1f} GiB (memory_limit_mib)", "kind": "oom"})
        return 3
    except _SignalError as exc:
        _write(out, {"error": str(exc)[:500], "kind": "signal"})
        return 3
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, tf.errors.ResourceExhaustedError):
            _write(out, {"error": _oom_message(exc, limit), "kind": "oom"})
            return 3
        _write(out, {"error": f"workload({n}) raised {type(exc).__name__}: {exc}"[:500],
                     "kind": "raised", "traceback": traceback.format_exc(limit=6)})
        return 3
    auxiliary = aux.finish(seconds, graph_built)
    if signal != "returned":
        try:
            auxiliary["returned"] = _number_result(result, n)
        except _SignalError:
            pass
    _write(out, {"value": value, "seconds": seconds, "extra": extra, "aux": auxiliary,
                 "tf_version": tf.__version__})
    return 0


def _type_name(obj) -> str:
    return "None" if obj is None else type(obj).__name__


def zygote() -> int:
    """Import TensorFlow once, then fork one fresh child per request read from stdin.

    Requests and replies are JSON lines. Request: {"id", "spec", "out", "log", "cwd"}.
    Replies: {"id", "pid"} once the child runs (it leads its own session: kill it with killpg),
    then {"id", "rc"} when it has exited (rc < 0: killed by that signal). The children never
    share state: each starts from this process as it was right after ``import tensorflow``,
    before TensorFlow's runtime (threads, allocators, eager context) was initialised."""
    import threading

    import tensorflow  # noqa: F401,PLC0415 - the whole point: pay for it once

    lock = threading.Lock()

    def reply(obj):
        with lock:
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()

    live: set = set()

    def reap(rid, pid):
        _, status = os.waitpid(pid, 0)
        live.discard(pid)
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        reply({"id": rid, "rc": rc})

    reply({"ready": True})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        with lock:  # no reply is half-written while we fork
            pid = os.fork()
        if pid == 0:
            code = 70
            try:
                os.setsid()
                fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.close(fd)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                sys.stdout = open(1, "w", buffering=1, closefd=False)  # fresh locks
                sys.stderr = open(2, "w", buffering=1, closefd=False)
                sys.stdin = open(0, "r", closefd=False)
                os.chdir(req["cwd"])
                code = measure(req["spec"], req["out"])
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        live.add(pid)
        reply({"id": req["id"], "pid": pid})
        threading.Thread(target=reap, args=(req["id"], pid), daemon=True).start()
    # stdin closed: the verifier is done or died. Leave no measurement running without its limit.
    for pid in list(live):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    return 0


def gpus() -> int:
    """Print how many GPUs TensorFlow lists here, as one JSON line: the verifier's parent asks
    (requirements.py) before it runs a claim that requires a GPU."""
    import tensorflow as tf  # noqa: PLC0415

    print(json.dumps({"gpus": len(tf.config.list_physical_devices("GPU")), "tensorflow": tf.__version__}))
    return 0


def main() -> int:
    if sys.argv[1:] == ["--zygote"]:
        return zygote()
    if sys.argv[1:] == ["--gpus"]:
        return gpus()
    return measure(json.loads(sys.argv[1]), sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
