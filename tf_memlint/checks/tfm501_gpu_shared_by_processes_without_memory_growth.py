"""TFM501 gpu-shared-by-processes-without-memory-growth: several TensorFlow processes on one GPU with
no GPU memory setting."""

from __future__ import annotations

import libcst as cst

from tf_memlint.facts.processes import PROCESS_TRIGGERS, Start, ProcessFacts
from tf_memlint.rule import Rule, register
from tf_memlint.syntax import code_of

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@register
class ProcessesWithoutGpuMemorySetting(Rule):
    """Worker processes that use TensorFlow, several at a time, with no GPU memory setting.

    Bad::

        def train_and_score(config):
            model = build_model(config)          # TensorFlow in the worker
            ...

        with multiprocessing.Pool(4) as pool:
            scores = pool.map(train_and_score, configs)

    Good::

        def train_and_score(config):
            for gpu in tf.config.list_physical_devices("GPU"):
                tf.config.experimental.set_memory_growth(gpu, True)
            model = build_model(config)
            ...

    Without memory growth or a memory limit, TensorFlow's GPU allocator reserves nearly all free
    GPU memory in the first process that touches the GPU; the next process gets what is left and
    runs out. Fires at the call that starts the processes (``Process(target=f)``, a ``Process``
    subclass, ``pool.map(f, ...)``, ``executor.submit(f, ...)``, a pool's ``initializer=f``) when
    ``f`` is a function of this module that uses TensorFlow (followed through the local functions
    it calls), more than one TensorFlow process can run at once (a pool not known to have one
    worker; a ``Process`` started in a loop that does not join it in the same iteration, in a
    comprehension, or next to another such ``Process`` in the same function; or a parent that
    used TensorFlow before starting it), and neither ``f``, the pool's initializer, the function
    that starts the processes nor module-level code sets GPU memory up (``set_memory_growth``,
    ``memory_limit``, ``set_visible_devices``, ``allow_growth``, ``per_process_gpu_memory_fraction``,
    ``TF_FORCE_GPU_ALLOW_GROWTH``, ``CUDA_VISIBLE_DEVICES`` per worker...). Opt-in.
    """

    code = "TFM501"
    name = "gpu-shared-by-processes-without-memory-growth"
    summary = ("worker processes use TensorFlow on a GPU several at a time with no memory growth or "
               "limit: the first one reserves nearly all GPU memory")
    default_enabled = False
    triggers = PROCESS_TRIGGERS

    def __init__(self, context, settings) -> None:
        super().__init__(context, settings)
        self._in_comprehension: set[int] = set()
        self._reported_pools: set[int] = set()
        self._seen: set[tuple[int, int]] = set()
        self._scope_starts: dict[int, list[Start]] = {}

    def _comprehension(self, node) -> None:
        elements = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
        for element in elements:
            self._in_comprehension.update(id(n) for n in [element, *self.context.nodes_in(element)])

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if context.in_traced_function:
            return
        facts = context.facts_of(ProcessFacts)
        start = facts.start(node)
        if start is None:
            return
        if start.kind == "pool" and id(start.pool) in self._reported_pools:
            return  # its initializer was reported: one finding per pool
        key = (id(start.pool) if start.pool is not None else id(node), id(start.target))
        if start.kind == "pool" and key in self._seen:
            return
        use = facts.uses_tensorflow(start.target)
        if use is None:
            return
        why = self._concurrent(node, start)
        if why is None:
            return
        scope = context.function.node if context.function is not None else context.module
        if facts.configures_gpu(start.target) or facts.module_configures_gpu() \
                or (scope is not context.module and facts.configures_gpu(scope)) \
                or (start.pool is not None and self._initializer_configures(start.pool)):
            return
        self._seen.add(key)
        if start.kind == "initializer":
            self._reported_pools.add(id(start.pool))
        self.report(node, self._message(node, start, use, why))

    def _initializer_configures(self, pool: cst.Call) -> bool:
        facts = self.context.facts_of(ProcessFacts)
        start = facts.start(pool)
        return start is not None and facts.configures_gpu(start.target)

    # More than one TensorFlow process at a time ---------------------------------------------------
    def _concurrent(self, node: cst.Call, start: Start) -> str | None:
        """Why more than one process using TensorFlow can run at once, or None if not known."""
        context = self.context
        facts = context.facts_of(ProcessFacts)
        if start.pool is not None:
            size = facts.pool_size(start.pool)
            if size is None or size > 1:
                return f"in a pool of {size} workers" if size else "in a pool of several workers"
        else:
            loops = context.loops_running(node)
            if id(node) in self._in_comprehension:
                return "in a comprehension, several at once"
            if loops and not (context.iterations(loops) is not None and context.iterations(loops) < 2) \
                    and not self._joined_in(node, loops[-1]):
                return "made in a loop that does not join it before the next iteration, so several run at once"
            other = self._other_start(node)
            if other is not None:
                line = context.functions.line_of(other.call)
                return f"next to another TensorFlow process started at line {line}"
        parent = self._parent_tensorflow(node)
        if parent is not None:
            return f"while this process uses TensorFlow too ({parent})"
        return None

    def _joined_in(self, node: cst.Call, loop) -> bool:
        """The loop waits for the process it starts: ``p = Process(...)``, then ``p.join()`` in it."""
        context = self.context
        names = {target.target.value for n in context.nodes_in(loop) if isinstance(n, cst.Assign) and n.value is node
                 for target in n.targets if isinstance(target.target, cst.Name)}
        return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "join"
                   and isinstance(n.func.value, cst.Name) and n.func.value.value in names
                   for n in context.nodes_in(loop))

    def _other_start(self, node: cst.Call) -> Start | None:
        """Another ``Process`` start in the same function (or at module level) whose target uses
        TensorFlow, and that may run at the same time: the first of the two is not joined
        (``p.join()`` on the name it is bound to) before the second starts."""
        context = self.context
        facts = context.facts_of(ProcessFacts)
        scope = context.function.node if context.function is not None else context.module
        starts = self._scope_starts.get(id(scope))
        if starts is None:
            starts = []
            for call in facts.body(scope):
                if isinstance(call, cst.Call):
                    found = facts.start(call)
                    if found is not None and found.kind == "process" and facts.uses_tensorflow(found.target):
                        starts.append(found)
            self._scope_starts[id(scope)] = starts
        body = facts.body(scope)
        order = {id(n): i for i, n in enumerate(body)}
        for other in starts:
            if other.call is node:
                continue
            first, second = sorted((node, other.call), key=lambda c: order.get(id(c), -1))
            if not _joined_between(body, first, order.get(id(first), -1), order.get(id(second), -1)):
                return other
        return None

    def _parent_tensorflow(self, node: cst.Call) -> str | None:
        """The process that starts the workers used TensorFlow before (it holds its GPU memory
        while they run): a call before ``node`` in the same function, or at module level, or
        anywhere in a loop around ``node``."""
        context = self.context
        facts = context.facts_of(ProcessFacts)
        scope = context.function.node if context.function is not None else context.module
        body = facts.body(scope)
        index = next((i for i, n in enumerate(body) if n is node), len(body))
        looped = {id(n) for loop in context.loops_running(node) for n in context.nodes_in(loop)}
        calls = [n for i, n in enumerate(body) if isinstance(n, cst.Call) and n is not node
                 and (i < index or id(n) in looped)]
        found = facts.tensorflow_in(calls, scope)
        if found is None and scope is not context.module:  # module-level code ran first: its own calls
            module_calls = [n for n in facts.body(context.module) if isinstance(n, cst.Call)]
            found = facts.tensorflow_in(module_calls, context.module, follow=False)
        return f"calls {found}" if found is not None else None

    def _message(self, node: cst.Call, start: Start, use: str, why: str) -> str:
        if start.kind == "process":
            subclass = start.label == f"{code_of(node.func)}.run"  # class Worker(Process): def run
            called = f"{code_of(node.func)}()" if subclass else f"{code_of(node.func)}(target={start.label})"
            what = f"{called} starts a process running {start.label}()"
        elif start.kind == "initializer":
            what = f"{code_of(node.func)}(initializer={start.label}) runs {start.label}() in every worker"
        else:
            what = f"{code_of(node.func)}({start.label}, ...) runs {start.label}() in worker processes"
        return (f"{what}, which uses TensorFlow ({use}), {why}, and nothing sets GPU memory up: the first "
                f"process on a GPU reserves nearly all of its memory and the others run out; enable memory "
                f"growth (tf.config.experimental.set_memory_growth(gpu, True)) or set a memory_limit in "
                f"{start.label}() or at module level")


def _joined_between(body: list, start: cst.Call, begin: int, end: int) -> bool:
    """``p = <start>`` and then ``p.join()`` among ``body[begin:end]`` (source order)."""
    names = {target.target.value for n in body if isinstance(n, cst.Assign) and n.value is start
             for target in n.targets if isinstance(target.target, cst.Name)}
    return bool(names) and any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "join"
        and isinstance(n.func.value, cst.Name) and n.func.value.value in names for n in body[begin:end])
