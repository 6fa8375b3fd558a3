"""Worker processes, what they run, and the GPU memory settings around them (TFM5xx).

Reached with ``context.facts_of(ProcessFacts)`` (built once per linted module, on first use), so
the core context does not need to know this module.

* **Process starts**: ``multiprocessing.Process(target=f)`` (also ``ctx.Process`` where ``ctx`` is
  ``multiprocessing.get_context(...)``, and ``Worker(...)`` for a class of this module deriving
  from ``multiprocessing.Process``, whose ``run`` is the target); a pool's ``initializer``
  (``multiprocessing.Pool`` / ``concurrent.futures.ProcessPoolExecutor``); a function handed to a
  pool (``pool.map(f, ...)``, ``executor.submit(f, ...)``...). Thread pools are not processes:
  their threads share one TensorFlow runtime and one allocator.
* **Device use**: a function of this module uses TensorFlow in a way that creates the runtime's
  devices (``uses_tensorflow``): a TensorFlow/Keras call other than configuration, logging and
  seeding, a Keras model class of this module, a method of a Keras model; followed through the
  local functions it calls.
* **GPU memory settings** (``configures_gpu``): memory growth, a memory limit or a virtual device
  configuration, the visible devices, TF1's ``allow_growth`` / ``per_process_gpu_memory_fraction``,
  the ``TF_FORCE_GPU_ALLOW_GROWTH`` / ``TF_GPU_ALLOCATOR`` variables, ``CUDA_VISIBLE_DEVICES`` set
  to anything but a fixed device list; any mention counts (the rule stays silent), followed
  through local calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import argument, code_of, subclasses

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

PROCESS_CLASSES = frozenset({"multiprocessing.Process", "multiprocessing.context.Process",
                             "multiprocessing.process.BaseProcess"})
CONTEXT_FACTORIES = frozenset({"multiprocessing.get_context"})
POOL_CLASSES = frozenset({"multiprocessing.Pool", "multiprocessing.pool.Pool"})
EXECUTOR_CLASSES = frozenset({"concurrent.futures.ProcessPoolExecutor",
                              "concurrent.futures.process.ProcessPoolExecutor"})
POOL_METHODS = frozenset({"map", "map_async", "imap", "imap_unordered", "starmap", "starmap_async",
                          "apply", "apply_async"})
EXECUTOR_METHODS = frozenset({"submit", "map"})
# Gate triggers: every spelling of a process start names the class (``mp.Process``, ``ctx.Process``,
# ``Pool(...)``, ``class Worker(mp.Process)``) and imports its package; the gate counts the names a
# from-import imports, so ``from multiprocessing import Pool as P`` keeps the file, while a Keras
# model with ``MaxPool2D`` layers and no multiprocessing import does not.
PROCESS_TRIGGERS = frozenset(f"~{name.rsplit('.', 1)[-1]}&~{name.split('.', 1)[0]}"
                             for name in PROCESS_CLASSES | POOL_CLASSES | EXECUTOR_CLASSES)

# TensorFlow/Keras calls that do not create the runtime's devices (nor reserve GPU memory):
# configuration, logging, seeding, mode switches, and writing TFRecord files of Example protos
# (file I/O and protobufs: a pool of workers converting a dataset to TFRecords leaves TF 2.21's
# eager context uninitialized). Every other TF/Keras call counts as device use.
NO_DEVICE_PREFIXES = (
    "tensorflow.config.", "tensorflow.io.gfile.", "tensorflow.gfile.", "tensorflow.io.TFRecordWriter",
    "tensorflow.io.TFRecordOptions", "tensorflow.python_io.", "tensorflow.train.Example",
    "tensorflow.train.SequenceExample", "tensorflow.train.Feature", "tensorflow.train.BytesList",
    "tensorflow.train.FloatList", "tensorflow.train.Int64List", "tensorflow.get_logger", "tensorflow.logging.",
    "tensorflow.autograph.set_verbosity", "tensorflow.random.set_seed", "tensorflow.set_random_seed",
    "tensorflow.debugging.set_log_device_placement", "tensorflow.ConfigProto", "tensorflow.GPUOptions",
    "tensorflow.enable_eager_execution", "tensorflow.disable_eager_execution",
    "tensorflow.disable_v2_behavior", "tensorflow.enable_v2_behavior", "tensorflow.executing_eagerly",
    "tensorflow.version", "tensorflow.sysconfig", "tensorflow.device", "tensorflow.function",
    "tensorflow.name_scope", "tensorflow.TensorSpec", "keras.utils.set_random_seed",
    "keras.backend.clear_session", "keras.utils.clear_session", "keras.mixed_precision.", "keras.config.",
    "keras.backend.set_floatx", "keras.backend.floatx", "keras.backend.set_image_data_format",
    "keras.backend.image_data_format", "keras.backend.set_session",
)
# Names, attributes and keywords that configure GPU memory (any spelling, resolved or not).
GPU_MEMORY_WORDS = frozenset({
    "set_memory_growth", "set_logical_device_configuration", "set_virtual_device_configuration",
    "LogicalDeviceConfiguration", "VirtualDeviceConfiguration", "memory_limit", "set_visible_devices",
    "allow_growth", "per_process_gpu_memory_fraction", "visible_device_list",
})
GPU_MEMORY_VARIABLES = ("TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR")
VISIBLE_DEVICES_VARIABLE = "CUDA_VISIBLE_DEVICES"
_MAX_DEPTH = 3  # local functions followed below a target


class Start:
    """A call that starts worker processes running ``target`` (a def or lambda of this module)."""

    __slots__ = ("call", "kind", "label", "target", "pool")

    def __init__(self, call: cst.Call, kind: str, label: str, target: cst.CSTNode,
                 pool: cst.Call | None = None) -> None:
        self.call = call
        self.kind = kind  # "process", "initializer" or "pool"
        self.label = label  # how the code names the target: worker, self.run, Worker.run
        self.target = target  # the FunctionDef or Lambda the processes run
        self.pool = pool  # the Pool / ProcessPoolExecutor call, for "initializer" and "pool"


class ProcessFacts:
    def __init__(self, context: TFContext) -> None:
        self.context = context
        self._uses: dict[int, str | None] = {}
        self._configures: dict[int, bool] = {}
        self._module_configures: bool | None = None
        self._fixed_pins: set[int] | None = None
        self.process_classes = self._process_subclasses()

    def _value(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        context = self.context
        if not isinstance(expr, cst.Name):
            return expr
        return context.value_of(expr, AT_POINT) or context.value_of(expr)

    def _is_mp_context(self, expr: cst.BaseExpression) -> bool:
        """``multiprocessing.get_context("spawn")``, directly or through a name bound to it."""
        value = self._value(expr)
        return isinstance(value, cst.Call) and self.context.imported_name(value.func) in CONTEXT_FACTORIES

    def _process_subclasses(self) -> dict[str, cst.ClassDef]:
        classes = [node for node in self.context.scopes if isinstance(node, cst.ClassDef)]
        names = subclasses(classes, lambda base: self.context.imported_name(base) in PROCESS_CLASSES or (
            isinstance(base, cst.Attribute) and base.attr.value == "Process" and self._is_mp_context(base.value)))
        found: dict[str, cst.ClassDef] = {}
        for cls in classes:
            if cls.name.value in names:
                found.setdefault(cls.name.value, cls)
        return found

    # Process starts -------------------------------------------------------------------------------
    def pool_kind(self, call: cst.BaseExpression) -> str | None:
        """"pool" for a multiprocessing pool, "executor" for a ProcessPoolExecutor, else None."""
        if not isinstance(call, cst.Call):
            return None
        name = self.context.imported_name(call.func)
        if name in POOL_CLASSES or (isinstance(call.func, cst.Attribute) and call.func.attr.value == "Pool"
                                    and self._is_mp_context(call.func.value)):
            return "pool"
        if name in EXECUTOR_CLASSES:
            return "executor"
        return None

    def pool_size(self, pool: cst.Call) -> int | None:
        """The worker count when it is a known integer (None: unknown, or the CPU count)."""
        size = argument(pool, 0, "processes" if self.pool_kind(pool) == "pool" else "max_workers")
        return None if size is None else self.context.int_value(size, AT_POINT)

    def pool_of(self, receiver: cst.BaseExpression) -> cst.Call | None:
        """The Pool / ProcessPoolExecutor call ``receiver`` is (``with Pool(4) as pool``)."""
        value = self._value(receiver)
        return value if self.pool_kind(value) is not None else None  # type: ignore[return-value]

    def start(self, call: cst.Call) -> Start | None:
        """The process start ``call`` is, with a target of this module, else None."""
        func = call.func
        where = self._where()
        if self.context.imported_name(func) in PROCESS_CLASSES or (
                isinstance(func, cst.Attribute) and func.attr.value == "Process" and self._is_mp_context(func.value)):
            return self._start(call, "process", argument(call, 1, "target"), where)
        if isinstance(func, cst.Name) and func.value in self.process_classes:
            run = self._method(self.process_classes[func.value], "run")
            if run is None:
                return None
            return Start(call, "process", f"{func.value}.run", run)
        kind = self.pool_kind(call)
        if kind is not None:
            initializer = argument(call, 1 if kind == "pool" else 2, "initializer")
            return self._start(call, "initializer", initializer, where, pool=call)
        if isinstance(func, cst.Attribute) and func.attr.value in POOL_METHODS | EXECUTOR_METHODS:
            pool = self.pool_of(func.value)
            if pool is None:
                return None
            methods = POOL_METHODS if self.pool_kind(pool) == "pool" else EXECUTOR_METHODS
            if func.attr.value not in methods:
                return None
            target = argument(call, 0, "func" if self.pool_kind(pool) == "pool" else "fn")
            return self._start(call, "pool", target, where, pool=pool)
        return None

    def _where(self) -> cst.CSTNode | None:
        frame = self.context.function
        return frame.node if frame is not None else None

    def _start(self, call: cst.Call, kind: str, target: cst.BaseExpression | None,
               where: cst.CSTNode | None, pool: cst.Call | None = None) -> Start | None:
        found = self.target_of(target, where) if target is not None else None
        if found is None:
            return None
        label, node = found
        return Start(call, kind, label, node, pool)

    def target_of(self, expr: cst.BaseExpression, where: cst.CSTNode | None) -> tuple[str, cst.CSTNode] | None:
        """(label, def or lambda) of this module that ``expr`` names: ``worker``, ``self.run``,
        ``agent.work``, ``functools.partial(worker, ...)``, a lambda."""
        if isinstance(expr, cst.Call) and self.context.imported_name(expr.func) == "functools.partial" and expr.args:
            expr = expr.args[0].value
        if isinstance(expr, cst.Lambda):
            return "lambda", expr
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        found = self.context.functions.resolve(cst.Call(func=expr), where)
        if found is None:
            return None
        return code_of(expr), found[1]

    def _method(self, cls: cst.ClassDef, name: str, _depth: int = 0) -> cst.FunctionDef | None:
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                return statement
        if _depth > 3:
            return None
        for base in cls.bases:
            if isinstance(base.value, cst.Name) and base.value.value in self.process_classes:
                found = self._method(self.process_classes[base.value.value], name, _depth + 1)
                if found is not None:
                    return found
        return None

    # What a function does on the device -----------------------------------------------------------
    def body(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Every node a def, a lambda or the module runs, in source order (nested defs left out)."""
        if isinstance(node, cst.Lambda):
            return [node.body, *self.context.nodes_in(node.body)]
        if isinstance(node, cst.Module):
            return self.context.nodes_in(node)
        return self.context.nodes_in(node.body)  # type: ignore[attr-defined]

    def uses_tensorflow(self, node: cst.CSTNode) -> str | None:
        """What makes ``node`` (a def, a lambda, the module) create TensorFlow's devices: the
        first such call, ``keras.Sequential()`` or ``load_model() via build()``; None if nothing."""
        key = id(node)
        if key not in self._uses:
            self._uses[key] = self.tensorflow_in(
                [n for n in self.body(node) if isinstance(n, cst.Call)], node)
        return self._uses[key]

    def tensorflow_in(self, calls: list[cst.Call], where: cst.CSTNode | None, follow: bool = True,
                      _depth: int = 0, _seen: frozenset = frozenset()) -> str | None:
        """The first of ``calls`` (made in def ``where``) that creates TensorFlow's devices,
        itself or (``follow``) through the local functions it calls (``_MAX_DEPTH`` deep), described."""
        context = self.context
        functions = context.functions
        owner = where if isinstance(where, (cst.FunctionDef, cst.Lambda)) else None
        seen = _seen | {id(where)}
        for call in calls:  # in source order: the first call that does it, directly or not
            name = context.call_name(call)
            if name is not None and not name.startswith(NO_DEVICE_PREFIXES):
                return code_of(call.func) + "()"
            func = call.func
            if isinstance(func, cst.Name) and func.value in context.keras.layer_classes:
                return code_of(func) + "()"
            if isinstance(func, cst.Attribute) and name is None \
                    and functions.is_model_static(func.value, owner):
                return code_of(func) + "()"  # model.predict() on a Keras model
            if not follow or _depth >= _MAX_DEPTH:
                continue
            target = functions.resolve(call, owner)
            if target is None or id(target[1]) in seen:
                continue
            label, callee = target
            inner = [n for n in self.body(callee) if isinstance(n, cst.Call)]
            found = self.tensorflow_in(inner, callee, True, _depth + 1, seen)
            if found is not None:
                return found if " via " in found else f"{found} via {label}()"
        return None

    def configures_gpu(self, node: cst.CSTNode, _depth: int = 0, _seen: frozenset = frozenset()) -> bool:
        """``node`` (a def, a lambda, the module) sets GPU memory up, itself or through the local
        functions it calls (see the module docstring for what counts)."""
        key = id(node)
        if _depth == 0 and key in self._configures:
            return self._configures[key]
        found = self._configures_gpu(node, _depth, _seen | {key})
        if _depth == 0:
            self._configures[key] = found
        return found

    def _configures_gpu(self, node: cst.CSTNode, depth: int, seen: frozenset) -> bool:
        pins = self._pins()
        body = self.body(node)
        for n in body:
            if isinstance(n, cst.Name) and n.value in GPU_MEMORY_WORDS:
                return True
            if isinstance(n, cst.SimpleString):
                text = n.evaluated_value if isinstance(n.evaluated_value, str) else ""
                if any(v in text for v in GPU_MEMORY_VARIABLES):
                    return True
                if VISIBLE_DEVICES_VARIABLE in text and id(n) not in pins:
                    return True
        if depth >= _MAX_DEPTH:
            return False
        where = node if isinstance(node, (cst.FunctionDef, cst.Lambda)) else None
        for call in (n for n in body if isinstance(n, cst.Call)):
            target = self.context.functions.resolve(call, where)
            if target is not None and id(target[1]) not in seen \
                    and self.configures_gpu(target[1], depth + 1, seen):
                return True
        return False

    def _pins(self) -> set[int]:
        """The ``"CUDA_VISIBLE_DEVICES"`` strings that pin a fixed device list (``os.environ[...]
        = "0"``, ``setdefault(..., "0")``): that does not share a GPU between processes."""
        if self._fixed_pins is None:
            pins: set[int] = set()
            for node in self.context.nodes_in(self.context.module, into_functions=True):
                key = value = None
                if isinstance(node, cst.Assign) and len(node.targets) == 1 \
                        and isinstance(node.targets[0].target, cst.Subscript):
                    target = node.targets[0].target
                    element = target.slice[0].slice if len(target.slice) == 1 else None
                    key = element.value if isinstance(element, cst.Index) else None
                    value = node.value
                elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                        and node.func.attr.value in ("setdefault", "putenv") and len(node.args) == 2:
                    key, value = node.args[0].value, node.args[1].value
                if isinstance(key, cst.SimpleString) and key.evaluated_value == VISIBLE_DEVICES_VARIABLE \
                        and isinstance(value, cst.SimpleString) and value.evaluated_value not in ("", "-1"):
                    pins.add(id(key))
            self._fixed_pins = pins
        return self._fixed_pins

    def module_configures_gpu(self) -> bool:
        """Module-level code (the ``__main__`` block included) sets GPU memory up."""
        if self._module_configures is None:
            self._module_configures = self.configures_gpu(self.context.module)
        return self._module_configures
