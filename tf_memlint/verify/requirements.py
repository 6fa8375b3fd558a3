"""What a claim needs from the machine (its ``requires``), decided before anything is measured.

A claim whose requirement does not hold here is INCONCLUSIVE, with the reason "not measurable
here: needs a GPU (...)", and none of its measurements run: a machine that cannot measure a claim
neither confirms nor refutes it. The parent never imports TensorFlow, so:

``gpu``: decided in two steps, cheapest first, each answer kept for the whole run.

1. Without starting anything: ``CUDA_VISIBLE_DEVICES`` set to ``""`` or ``-1`` hides every GPU;
   on Linux, a machine with no GPU device node (``/dev/nvidia0``..., ``/dev/kfd`` for ROCm,
   ``/dev/dxg`` for WSL 2) has no GPU a process could use (the drivers create those nodes, and
   containers get them passed in). That is the whole cost on a CPU machine: one ``glob``.
2. Otherwise (a device node exists, or the system has no ``/dev`` to read), a device node alone
   does not say that TensorFlow can use it (``tensorflow-cpu`` installed, a driver or CUDA library
   mismatch), so a child process asks TensorFlow itself (``_child.py --gpus``: the same
   interpreter, TensorFlow and environment the measurements get, GPU visible, counts
   ``tf.config.list_physical_devices("GPU")``). A claim then runs only where its workload will
   find a GPU, rather than coming out ERROR.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

from .claims import REQUIREMENTS

GPU_DEVICE_NODES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dxg")
PROBE_TIMEOUT_S = 300.0
_ANSWERS: dict[str, str | None] = {}


def unmet(claim) -> str | None:
    """Why ``claim`` cannot be measured on this machine ("not measurable here: ..."), or None."""
    for requirement in getattr(claim, "requires", ()):
        if requirement not in _ANSWERS:
            _ANSWERS[requirement] = _CHECKS[requirement]()
        missing = _ANSWERS[requirement]
        if missing is not None:
            return f"not measurable here: needs {REQUIREMENTS[requirement]} ({missing})"
    return None


def gpu_missing(python: str = sys.executable) -> str | None:
    """Why no GPU can be used here (see the module docstring), or None when TensorFlow sees one."""
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and hidden.strip() in ("", "-1"):
        return f"none visible: CUDA_VISIBLE_DEVICES={hidden!r} hides them"
    if sys.platform.startswith("linux") and not any(glob.glob(pattern) for pattern in GPU_DEVICE_NODES):
        return "none visible: no /dev/nvidia*, /dev/kfd or /dev/dxg device"
    count, detail = tensorflow_gpus(python)
    if count is None:
        return f"could not tell: {detail}"
    if count == 0:
        return f"none visible: {detail} lists no GPU"
    return None


def tensorflow_gpus(python: str = sys.executable, timeout: float = PROBE_TIMEOUT_S) -> tuple[int | None, str]:
    """(how many GPUs TensorFlow lists in a child process with the GPU visible, "TensorFlow 2.x.y");
    the count is None when the child could not say, and the text then says why."""
    from .runner import CHILD, child_env

    try:
        done = subprocess.run([python, str(CHILD), "--gpus"], env=child_env(gpu=True), capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"the GPU probe (a child asking TensorFlow) did not answer within {timeout:g} s"
    except OSError as exc:
        return None, f"the GPU probe could not start: {exc}"
    for line in reversed(done.stdout.splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and isinstance(answer.get("gpus"), int):
            return answer["gpus"], f"TensorFlow {answer.get('tensorflow', '?')}"
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
    return None, f"the GPU probe exited with status {done.returncode}: {tail[0][:200]}"


_CHECKS = {"gpu": gpu_missing}
assert set(_CHECKS) == set(REQUIREMENTS)
