"""The evidence behind a finding: how often its place runs, in what kind of process.

Harm is cost per repetition x repetitions x how long the process lives, so every rule asks the
same questions of the place it reports, and they are answered here, once, from the walk
position (``TFContext``: the loops open around the node, the function and what calls it):

* **repetition**: once; a known count; small (bounded by data of known, small size); per item
  of a dataset, generator, file list or ``Sequence``; per request (route handlers, servicer
  methods); per environment step; per callback event; per epoch; unbounded (``while True``);
  unknown;
* **lifetime**: test code, a notebook kernel, a server, or a program (script, library).

An answer says how it was obtained: ``known`` (read off the code: ``range(10000)``, a route
decorator) or inferred (a name such as ``epochs`` bounds the loop). Confidence is graded from
that (grading.py), never from the rule's own wishes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst

from tf_memlint.command_line import OptionDefaults
from tf_memlint.scopes import AT_POINT
from tf_memlint.syntax import (DICT_VIEWS, code_of, contains, dotted_name, ends_loop_after, every_nth_guard,
                               int_literal, loop_statements, remainder_divisors, target_names)

if TYPE_CHECKING:
    from tf_memlint.context import TFContext

# Repetition kinds, from the most to the least telling.
UNBOUNDED = "unbounded"        # while True, itertools.count(), a serving loop
PER_REQUEST = "per request"    # a route handler, a servicer method
PER_STEP = "per step"          # an environment / training step loop (while not done, range(steps))
PER_ITEM = "per item"          # a dataset, generator, file list, Sequence, DataFrame rows
PER_CALLBACK = "per callback"  # a Keras callback's per-batch hook
PER_EPOCH = "per epoch"        # the body of an epoch loop, outside its loop over batches
PER_TRIAL = "per trial"        # a hyper-parameter search's objective (Optuna's study.optimize)
COUNT = "count"                # a known trip count
SMALL = "small"                # bounded by a few items (a splitter, a literal of variants)
UNKNOWN = "unknown"            # a loop nobody can size from the code
ONCE = "once"                  # not repeated where it stands

GROWS = frozenset({UNBOUNDED, PER_REQUEST, PER_STEP, PER_ITEM, PER_CALLBACK, PER_EPOCH, PER_TRIAL})

TEST, NOTEBOOK, SERVER, PROGRAM = "test", "notebook", "server", "program"

# Loop bounds whose names say they count training or environment steps: inferred, not known.
_STEP_WORDS = re.compile(r"(^|_)(epochs?|steps?|iter(ation)?s?|episodes?|generations?|rounds?|updates?|"
                         r"batches|n_batches|num_batches|frames|timesteps|max_steps|total_steps)($|_)", re.I)
# Iterables that yield one item of some data per iteration.
_FILE_LISTINGS = frozenset({"os.listdir", "glob.glob", "glob.iglob", "os.walk", "os.scandir"})
_REPLAY_MEMORY = re.compile(r"memory|buffer|replay|experience|transitions", re.I)
_PATH_LISTINGS = frozenset({"glob", "rglob", "iterdir"})  # pathlib's
_ITEM_METHODS = frozenset({"iterrows", "itertuples", "readlines", "as_numpy_iterator", "flow",
                           "flow_from_directory", "flow_from_dataframe"})
# A dict's views, Python 3's and Python 2's (as methods, and as six's functions): a dict's keys
# are a few names someone wrote, or a model's layers, not items of data.
_DICT_VIEWS = DICT_VIEWS | {"iter" + view for view in DICT_VIEWS}
_WRAPPERS = frozenset({"enumerate", "zip", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm",
                       "reversed", "sorted", "list", "tuple", "iter", "progressbar", "track"})
_RANGES = frozenset({"range", "trange", "tqdm.trange", "tqdm.auto.trange", "xrange"})
# scikit-learn cross-validation splitters, which yield a few folds: (default n_splits, takes
# n_repeats). LeaveOneOut is not one of them: it yields one split per sample.
SPLITTERS = {
    "KFold": (5, False), "StratifiedKFold": (5, False), "GroupKFold": (5, False),
    "StratifiedGroupKFold": (5, False), "TimeSeriesSplit": (5, False), "RepeatedKFold": (5, True),
    "RepeatedStratifiedKFold": (5, True), "ShuffleSplit": (10, False),
    "StratifiedShuffleSplit": (10, False), "GroupShuffleSplit": (5, False),
}
_SERVER_MODULES = ("flask", "fastapi", "django", "starlette", "tornado", "aiohttp", "grpc", "streamlit",
                   "gradio", "sanic", "bottle", "falcon", "uvicorn")
_TEST_MODULES = ("pytest", "unittest")
# Frameworks that run the whole script again, top to bottom, on every interaction of a user.
RERUN_MODULES = ("streamlit",)


@dataclass(frozen=True)
class Repetition:
    kind: str
    count: int | None = None   # iterations in all, when known
    basis: str = ""            # the words a message shows: "while True", "range(10000)"
    known: bool = True         # read off the code, not inferred from a name
    # A loop nobody can size: it may run twice or a million times. Not the same as a rule's own
    # UNKNOWN (a size or a caller it cannot see), which still says the place is made to repeat.
    unsized_loop: bool = False
    # Per file of a folder: surely per item, but of a folder of unknown size (what a one-sample
    # payload cannot settle).
    folder: bool = False

    def words(self) -> str:
        if self.kind == COUNT:
            counted = f"{self.count:,} iteration{'' if self.count == 1 else 's'}"
            return f"{counted} ({self.basis})" if self.basis else counted
        if self.kind == ONCE:
            return self.basis  # the rule's own reason, when it gave one: the harm is not repetition
        return f"{self.kind}: {self.basis}" if self.basis else self.kind


@dataclass(frozen=True)
class Evidence:
    repetition: Repetition
    lifetime: str
    lifetime_basis: str = ""
    # The grade this finding's own precondition gives it when its place does not repeat, where
    # the rule knows more than its class default (TFM103: the mutated value is read back).
    once_confidence: str | None = None
    # What the finding holds where it stands, when the rule reads it off the code (the bytes of
    # an array embedded in a graph): its cost when the place runs once.
    held_bytes: float | None = None
    # The function of a script the finding stands in, when nothing in the script calls it (nor
    # names it): a draft or a leftover, which runs only if someone calls it from elsewhere.
    uncalled: str = ""

    def words(self) -> str:
        parts = [self.repetition.words()] if self.repetition.words() else []
        if self.uncalled:
            parts.append(f"{self.uncalled}() is not called in this script")
        if self.lifetime == TEST:
            parts.append(f"test code ({self.lifetime_basis})" if self.lifetime_basis else "test code")
        elif self.lifetime in (NOTEBOOK, SERVER):
            parts.append(self.lifetime)
        return "; ".join(parts)


ONCE_HERE = Repetition(ONCE)


def lifetime(context: TFContext) -> tuple[str, str]:
    """The kind of process the module runs in, and why: test code first (a test process exits),
    then a notebook kernel, then a server; anything else is a program."""
    if context.test_file and (context.test_file_configured or _holds_tests(context)):
        return TEST, "test file"
    for frame in context.frames:
        node = frame.node
        if isinstance(node, cst.FunctionDef) and _names_a_test(node.name.value):
            return TEST, f"{node.name.value}()"
    modules = imported_packages(context.aliases)
    if any(m in modules for m in _TEST_MODULES) and context.enclosing_class is not None \
            and any((dotted_name(b.value) or "").endswith("TestCase") for b in context.enclosing_class.bases):
        return TEST, "a TestCase"
    if getattr(context, "notebook", False):
        return NOTEBOOK, "notebook"
    if any(m in modules for m in _SERVER_MODULES):
        return SERVER, next(m for m in _SERVER_MODULES if m in modules)
    return PROGRAM, ""


def imported_packages(aliases: dict[str, str]) -> set[str]:
    """The top-level packages a module imports, from its import aliases (``TFContext.aliases``, or
    the gate's ``ModuleFacts.aliases``)."""
    return {m.split(".")[0] for m in aliases.values()}


def reruns_per_interaction(aliases: dict[str, str]) -> bool:
    """A framework runs the module's script again, top to bottom, on every interaction of a user
    (``RERUN_MODULES``); asked by the evidence and by the gate's RERUN_SCRIPT place."""
    return not imported_packages(aliases).isdisjoint(RERUN_MODULES)


def script_rerun(context: TFContext) -> Repetition | None:
    """The repetition of the module's own top-level code when a framework reruns the script on
    every interaction (Streamlit): per request. None for any other module."""
    if reruns_per_interaction(context.aliases):
        return Repetition(PER_REQUEST, basis="a Streamlit script runs again on every interaction")
    return None


def _holds_tests(context: TFContext) -> bool:
    """A file named like a test (``test_model.py``, ``ppo_test.py``, under ``test/``) is test code
    when it holds tests: it imports pytest or unittest, or defines a test function
    (``_names_a_test``) or a ``Test*`` class. An evaluation script named ``test_model.py`` that
    loads a model and plays it over a webcam or an environment is a program, run for as long as
    its loop runs."""
    if context.path and context.path.replace("\\", "/").rsplit("/", 1)[-1] == "conftest.py":
        return True
    if not imported_packages(context.aliases).isdisjoint(_TEST_MODULES):
        return True
    statements = list(context.module.body)
    statements += [inner for s in statements if isinstance(s, cst.ClassDef) for inner in s.body.body]
    return any(isinstance(s, cst.FunctionDef) and _names_a_test(s.name.value)
               or isinstance(s, cst.ClassDef) and (s.name.value.startswith("Test") or s.name.value.endswith("Test"))
               for s in statements)


def _names_a_test(name: str) -> bool:
    """``test_load``, ``testLoad``: a test's name; a plain ``test(env, agent)`` is an evaluation
    routine of a script (no test runner calls it with those arguments)."""
    return name.startswith("test_") or name.startswith("test") and name[4:5].isupper()


def evidence_at(context: TFContext, node: cst.CSTNode, repetition: Repetition | None = None,
                once_confidence: str | None = None, held_bytes: float | None = None,
                latency: bool = False) -> Evidence:
    """The evidence for a finding at ``node``, reported at the current walk position (the
    engine tells the context the file's path and the configured test globs); ``latency``: the
    harm is time per call (``repetition_at``)."""
    life, why = lifetime(context)
    return Evidence(repetition or repetition_at(context, node, latency), life, why, once_confidence, held_bytes)


def repetition_at(context: TFContext, node: cst.CSTNode, latency: bool = False) -> Repetition:
    """How often ``node`` runs where it stands: the loops open around it (innermost decides the
    kind; known counts multiply), else the event its function handles, else once; a loop in a
    request handler repeats per request. ``latency``: the harm is time per call, which a loop
    that waits for a person each pass hides."""
    inner = _repetition_in_function(context, node, latency)
    frame = context.function
    if frame is not None and frame.repeated == "request" and inner.kind not in GROWS and inner.kind != ONCE:
        # A loop in a request handler runs again with every request: however few its passes,
        # the place repeats per request (365 forecast steps a request, not 365 in all).
        loop = inner.words() if inner.kind == COUNT else (inner.basis or inner.kind)
        return Repetition(PER_REQUEST, basis=f"{frame.node.name.value}() handles requests, each with a loop: {loop}")
    return inner


def _repetition_in_function(context: TFContext, node: cst.CSTNode, latency: bool) -> Repetition:
    running = context.loops_running(node)
    loops = [loop for loop in running if not ends_loop_after(loop, node)]
    if running and not loops:
        return Repetition(ONCE, basis="the loop ends after it (break or return)")
    if loops:
        repetition = repetition_of_loops(context, loops)
        paced = latency and next((words for words in (_paced(context, loop) for loop in loops) if words), None)
        if paced and repetition.kind in (UNBOUNDED, PER_STEP, PER_ITEM, UNKNOWN):
            # A console chat (`while True: text = input()`), a viewer that waits for a key per
            # image: a person's pace, next to which a call's set-up time does not show.
            return Repetition(SMALL, basis=f"{repetition.basis}, each pass waits for {paced}", known=False)
        if repetition.kind in (UNBOUNDED, PER_STEP, PER_ITEM, UNKNOWN) and _guarded_by(loops[-1], node, _KEY_PRESS):
            # `if key == ord('s'):` in a webcam loop: it runs when a person presses a key.
            return Repetition(SMALL, basis=f"{repetition.basis}, per key press", known=False)
        # The wait of an enclosing loop paces the loops it runs too (per face found in a frame).
        wait = next(filter(None, (_waits_an_interval(context, loop) for loop in reversed(loops))), None) \
            if repetition.kind == UNBOUNDED else None
        if wait is not None:
            # `while True: evaluate(); time.sleep(FLAGS.eval_interval_secs)`: a pass every few
            # minutes. What a pass costs in time is hidden by the wait. What it leaves behind still
            # grows, as fast as the interval allows: a literal states that rate (sleep(60) is 1,440
            # passes a day), a setting does not.
            words, configured = wait
            if latency:
                return Repetition(SMALL, basis=f"{repetition.basis}, each pass waits {words}", known=False)
            if configured:
                return replace(repetition, known=False, basis=f"{repetition.basis}, a pass every {words}")
        run = repetition.kind == UNBOUNDED and not latency and _whole_run_per_pass(context, loops[-1], node)
        if run:
            # `while True:` around a load and a run of 5,000 episodes, or a call that trains for
            # hundreds of episodes: a restart per run, one more model or set of ops per run of
            # hours, not per step.
            return Repetition(SMALL, basis=f"{repetition.basis}, once per {run}", known=False)
        chosen = _chosen_iterations(loops[-1], node)
        if chosen is not None:
            # `if epoch == 0:` / `if episode in (80, 120):` runs on those iterations only.
            return Repetition(COUNT, chosen[0], f"{repetition.basis}, only when {chosen[1]}")
        return every_nth(repetition, loops, node)
    frame = context.function
    if frame is not None and frame.repeated is not None:
        return _event(frame.repeated, frame.node)
    return ONCE_HERE


def every_nth(repetition: Repetition, loops: list, node: cst.CSTNode) -> Repetition:
    """``repetition`` of the nested ``loops`` (a known count) for ``node``, which runs on every
    n-th pass only: `if step % 50 == 0:` in range(1000) runs the place 20 times, not 1,000, and
    so does a loop over four layers under that test (80 times, not 4,000)."""
    every = _every_nth(loops, node)
    if every and repetition.kind == COUNT and repetition.count is not None:
        return Repetition(COUNT, max(1, repetition.count // every),
                          f"{repetition.basis}, every {every}th" if repetition.basis else f"every {every}th")
    return repetition


# A remainder by fewer than this (`step % 4`) still runs the place often.
SPARSE_DIVISOR = 10


def sparse(repetition: Repetition, owner: cst.CSTNode, node: cst.CSTNode) -> Repetition:
    """``repetition`` of ``owner`` (a loop, or a def whose calls repeat) for ``node``, which runs
    only when a remainder test lets it (``if step % 1000 == 0:``, ``if self.learn_step %
    replace_iter == 0:``): a sampled evaluation, a checkpoint, a target-network update. A rule
    whose unit cost is small next to what a pass does asks this (TFM202: ops of a few KiB); a
    model built every 10th batch is still a model too many."""
    guard = every_nth_guard(owner, node, SPARSE_DIVISOR)
    if guard is None:
        return repetition
    basis = f"{repetition.basis}, only when {code_of(guard)}" if repetition.basis else f"only when {code_of(guard)}"
    if repetition.kind in GROWS and repetition.known:
        # Still repeats with the work, but how often is a fraction the code cannot size.
        return replace(repetition, known=False, basis=basis)
    if repetition.kind == COUNT and None in remainder_divisors(guard):
        # `% self.replace_iter` of 28,000 calls: how many times is the divisor's to say. (A literal
        # divisor is left to the count: repetition_at divides by it in the loop's own body.)
        return Repetition(UNKNOWN, basis=basis, known=False)
    return repetition


def _event(repeated: str, node: cst.CSTNode) -> Repetition:
    name = node.name.value if isinstance(node, cst.FunctionDef) else "handler"
    if repeated == "request":
        return Repetition(PER_REQUEST, basis=f"{name}() handles requests")
    if repeated == "batch":
        return Repetition(PER_CALLBACK, basis=f"{name}() runs every batch")
    if repeated == "trial":
        # As many trials as the search is given, in one process, each a whole model's training:
        # the objective exists to be run again and again, as a request handler does.
        return Repetition(PER_TRIAL, basis=f"{name}() runs every trial of a hyper-parameter search")
    if repeated == "step":
        # The RL library's training loop calls it once per environment step, without end.
        return Repetition(PER_STEP, basis=f"{name}() of an environment runs every environment step")
    return Repetition(SMALL, basis=f"{name}() runs every epoch", known=False)


def repetition_of_loops(context: TFContext, loops: list) -> Repetition:
    each = [repetition_of_loop(context, loop) for loop in loops]
    if each[-1].kind == PER_STEP and _counts_epochs(loops[-1]):
        # What stands in an epoch loop's own body, outside its loop over batches, runs once per
        # epoch: tens to a few hundred times, not once per training step.
        each[-1] = replace(each[-1], kind=PER_EPOCH, known=False)
    for kind in (UNBOUNDED, PER_REQUEST, PER_STEP, PER_ITEM, PER_CALLBACK, PER_EPOCH, PER_TRIAL):
        growing = [r for r in each if r.kind == kind]
        if growing:
            return growing[-1]
    counts = [r.count for r in each]
    if all(c is not None for c in counts):
        total = 1
        for c in counts:
            total *= c  # type: ignore[operator]
        basis = " x ".join(r.basis for r in each if r.basis)
        if any(r.kind == SMALL for r in each):
            return Repetition(SMALL, total, basis, known=all(r.known for r in each))
        return Repetition(COUNT, total, basis)
    unknown = [r for r in each if r.kind == UNKNOWN]
    return unknown[-1] if unknown else each[-1]


# A bound or counter named for epochs (``range(epochs)``, ``for epoch in ...``,
# ``while epoch < n_epochs``); not ``steps_per_epoch`` and the like, which count batches.
_EPOCH_WORDS = re.compile(r"(^|_)(n_|num_|nb_|max_|total_)?epochs?(_|$)")
_BATCH_WORDS = re.compile(r"batch|step|iter|per_epoch")


def _counts_epochs(loop: cst.For | cst.While) -> bool:
    text = f"{code_of(loop.target)} {code_of(loop.iter)}" if isinstance(loop, cst.For) else code_of(loop.test)
    words = re.sub(r"\W+", "_", text).lower()
    return bool(_EPOCH_WORDS.search(words)) and not _BATCH_WORDS.search(words)


def repetition_of_loop(context: TFContext, loop: cst.For | cst.While) -> Repetition:
    if isinstance(loop, cst.While):
        repetition = _while(context, loop)
        if repetition.kind in (UNBOUNDED, UNKNOWN) and _blocks_on_a_figure(context, loop):
            # `while True:` that shows a figure each pass (plt.show() waits for its window to be
            # closed): as many passes as a person cares to look at.
            return Repetition(SMALL, basis=f"{repetition.basis}, a figure shown per pass", known=False)
        return repetition
    repetition = _iterable(context, loop.iter, 0)
    if repetition.kind in (PER_ITEM, UNKNOWN) and _shows_a_figure(context, loop.body):
        # Each iteration puts a figure in front of a person: a handful of items, looked at.
        return Repetition(SMALL, basis=f"{repetition.basis}, a figure shown per item", known=False)
    return repetition


# Calls that put an image in front of a person (matplotlib, IPython's display).
_FIGURE_CALLS = frozenset({"matplotlib.pyplot.show", "matplotlib.pyplot.imshow", "IPython.display.display",
                           "IPython.core.display.display"})


def _shows_a_figure(context: TFContext, body: cst.CSTNode, depth: int = 0) -> bool:
    """``body`` calls plt.show()/plt.imshow()/display(), itself or through a function of this
    module it calls (one level: ``for path in images: show_and_predict(path)``)."""
    for node in context.nodes_in(body):
        if not isinstance(node, cst.Call):
            continue
        name = context.imported_name(node.func)
        if name in _FIGURE_CALLS:
            return True
        if isinstance(node.func, cst.Name) and name is None:
            if node.func.value == "display" and context.binding("display") is None:
                return True  # IPython's display(), a builtin of the notebook kernel
            if depth == 0:
                definition = _module_def(context, node.func.value)
                if definition is not None and _shows_a_figure(context, definition.body, 1):
                    return True
    return False


def _blocks_on_a_figure(context: TFContext, loop: cst.While) -> bool:
    """Every pass of ``loop`` calls ``plt.show()`` as it blocks (no ``block=False``), in the
    loop's own body, not under an ``if`` (``if do_plot:`` may be switched off): not a frame drawn
    with ``imshow`` and ``pause``, which a display loop does at its frame rate."""
    return any(context.imported_name(call.func) == "matplotlib.pyplot.show"
               and not any(arg.keyword is not None and arg.keyword.value == "block" for arg in call.args)
               for statement in loop.body.body if isinstance(statement, cst.SimpleStatementLine)
               for call in context.calls_in(statement))


def _module_def(context: TFContext, name: str) -> cst.FunctionDef | None:
    return next((s for s in context.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def _while(context: TFContext, loop: cst.While) -> Repetition:
    test = loop.test
    if isinstance(test, cst.Name) and test.value == "True" or isinstance(test, cst.Integer) and test.value != "0":
        return Repetition(UNBOUNDED, basis=f"while {code_of(test)}")
    text = code_of(test)
    if any(isinstance(part, cst.Call) and isinstance(part.func, cst.Attribute) and part.func.attr.value == "isOpened"
           for part in _operands(test)):
        # while cap.isOpened(), `while running and cap.isOpened()`: one iteration per frame of a
        # camera or a video, until it ends (or the flag beside it stops it)
        return Repetition(PER_ITEM, basis=f"while {text}: per frame")
    if re.search(r"\b(done|terminal|terminated|truncated|game_over|is_over)\b", text):
        return Repetition(PER_STEP, basis=f"while {text}")
    count = _counter_bound(context, test)
    if count is not None:
        return Repetition(COUNT, count, f"while {text}")
    if _STEP_WORDS.search(re.sub(r"\W+", "_", text)):
        return Repetition(PER_STEP, basis=f"while {text}")
    return _unsized(f"while {text}")


def _operands(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a chain of ``and``/``or`` (the test itself when it is none)."""
    if isinstance(test, cst.BooleanOperation):
        return _operands(test.left) + _operands(test.right)
    return [test]


def _counter_bound(context: TFContext, test: cst.BaseExpression) -> int | None:
    """``while i < 100`` with a literal or statically known bound."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual)):
        return context.int_value(test.comparisons[0].comparator, AT_POINT)
    return None


def _iterable(context: TFContext, iterable: cst.BaseExpression, depth: int) -> Repetition:
    text = code_of(iterable)
    if len(text) > 40:
        text = text[:37] + "..."
    if depth > 4:
        return _unsized(text)
    count = context.trip_count(iterable, AT_POINT)
    if _command_line(context, iterable):
        # `for path in sys.argv[1:]`: the files a person typed after the script's name.
        return Repetition(SMALL, basis=f"{text}, the command line's arguments", known=False)
    if isinstance(iterable, cst.Call):
        func = iterable.func
        name = dotted_name(func) or ""
        imported = context.imported_name(func) or name
        short = name.rsplit(".", 1)[-1]
        if imported in ("itertools.count", "itertools.cycle", "itertools.repeat") and not iterable.args[1:]:
            return Repetition(UNBOUNDED, basis=text)
        if short in _RANGES or imported.rsplit(".", 1)[-1] in _RANGES:
            if count is not None:
                return _counted(count, text)
            return _range_by_name(context, iterable, text)
        if short in _WRAPPERS and iterable.args:
            inner = _iterable(context, iterable.args[0].value, depth + 1)
            if count is not None and inner.kind in (UNKNOWN, COUNT):
                return _counted(count, text)
            return inner
        if short == "split" and isinstance(func, cst.Attribute):
            splitter = func.value
            if isinstance(splitter, cst.Name):
                splitter = context.value_of(splitter, AT_POINT) or splitter
            if isinstance(splitter, cst.Call) and (dotted_name(splitter.func) or "").rsplit(".", 1)[-1] in SPLITTERS:
                return Repetition(SMALL, count, basis=f"{code_of(splitter.func)} folds")
        if imported == "random.sample" and iterable.args and _REPLAY_MEMORY.search(code_of(iterable.args[0].value)):
            # random.sample(self.memory, batch_size): a DQN agent's replay, which its training
            # loop runs every environment step.
            return Repetition(PER_STEP, basis=f"{text}: a replay minibatch, every training step")
        stated = _stated_size(context, iterable, imported)
        if stated is not None:
            return _counted(stated, text)  # np.random.choice(len(x_test), 9): nine items drawn
        if imported in _FILE_LISTINGS or (isinstance(func, cst.Attribute) and func.attr.value in _PATH_LISTINGS):
            # A folder's files: as often the few test images of a demo as a dataset; how many
            # is not in the code.
            return Repetition(PER_ITEM, basis=text, known=False, folder=True)
        if isinstance(func, cst.Attribute) and func.attr.value in _ITEM_METHODS:
            return Repetition(PER_ITEM, basis=text)
        if (isinstance(func, cst.Attribute) and func.attr.value in _DICT_VIEWS) \
                or (short in _DICT_VIEWS and short.startswith("iter")):  # iteritems(d), imported from six
            if count is not None:
                return _counted(count, text)
            return _unsized(text)
        if _unpickled_dict(context, iterable):
            return _unsized(text)
        if context.is_dataset(iterable):
            return Repetition(PER_ITEM, count, basis=text) if count is None else _counted(count, text)
        if count is not None:
            return _counted(count, text)
        return _data_by_name(text) if _looks_like_data(text) else _unsized(text)
    if count is not None:
        return _counted(count, text)
    layers = iterable.value if isinstance(iterable, cst.Subscript) else iterable
    if isinstance(layers, cst.Attribute) and layers.attr.value == "layers":
        # model.layers, model.layers[1:]: as many passes as the model has layers, a few dozen
        return Repetition(SMALL, basis=f"{text}, the layers of a model", known=False)
    if isinstance(layers, (cst.Name, cst.Attribute)) and _MODEL_PARTS.search(code_of(layers).rpartition(".")[2]):
        # `for op_name in weights_dict:`, `for v in dis_params:`: a weight loader's pass per
        # variable of a model, a few dozen to a few hundred
        return Repetition(SMALL, basis=f"{text}, the weights of a model", known=False)
    if isinstance(iterable, (cst.ListComp, cst.GeneratorExp, cst.SetComp)) and iterable.for_in.inner_for_in is None:
        # [f for f in os.listdir(path) if ...]: as many items as its source, or fewer
        inner = _iterable(context, iterable.for_in.iter, depth + 1)
        if inner.kind in (PER_ITEM, SMALL):
            return _named(inner, text)
    if isinstance(iterable, cst.Name):
        value = context.value_of(iterable, AT_POINT)
        taken = _taken(context, value)
        if taken is not None:
            return _counted(taken, f"{text}, {code_of(value.func)}({taken})")  # type: ignore[union-attr]
        if iterable.value in context.dataset_names:
            return Repetition(PER_ITEM, basis=text)
        if isinstance(value, cst.Call) and _unpickled_dict(context, value):
            return _unsized(text)  # `data_dict = np.load(path).item()`: its name does not make it data
        if value is not None and value is not iterable and not isinstance(value, cst.Name):
            inner = _iterable(context, value, depth + 1)
            if inner.kind != UNKNOWN:
                return _named(inner, text)
        if _looks_like_data(iterable.value):
            return _data_by_name(text)
    if isinstance(iterable, (cst.Attribute, cst.Subscript)) and _looks_like_data(text):
        return _data_by_name(text)
    return _unsized(text)


def _unpickled_dict(context: TFContext, call: cst.Call) -> bool:
    """``np.load(path).item()``: a dict saved with ``np.save``, in TensorFlow code a model's
    weights by layer name (caffe-tensorflow's weight loader and its copies), or a few settings;
    a pass over it is a weight loader's, not one per item of data."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value == "item" and isinstance(func.value, cst.Call) \
        and context.imported_name(func.value.func) == "numpy.load"


def _command_line(context: TFContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """``sys.argv``, a slice of it, or a parameter every call of this module fills with one
    (``main(sys.argv[1:])``)."""
    target = expr.value if isinstance(expr, cst.Subscript) else expr
    if context.imported_name(target) == "sys.argv":
        return True
    if not isinstance(expr, cst.Name) or depth > 2:
        return False
    found = context.binding(expr.value)
    if found is None or expr.value not in found.scope.params or not isinstance(found.scope.node, cst.FunctionDef):
        return False
    given = context.functions.arguments_given(found.scope.node, expr.value)
    return bool(given) and all(arg is not None and _command_line(context, arg, depth + 1) for arg in given)


# Names of a model's weights or variables, by a word of the last part of a name or attribute:
# `weights_dict`, `t_vars`, `self.c_tar_var` (a list of target-network variables).
_MODEL_PARTS = re.compile(r"(^|_)(weights?|params|parameters|variables|vars?|var_list)(_|$)", re.I)


def _taken(context: TFContext, expr: cst.BaseExpression | None) -> int | None:
    """n for a name bound to ``dataset.take(n)`` (``.unbatch().take(TAKE_NUM)``) with n known: the
    trip count of the call itself (a loop over ``ds.take(n)`` is counted where it stands)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "take":
        return context.trip_count(expr, AT_POINT)
    return None


_DATA_WORDS = re.compile(r"(images?|imgs?|files?|paths?|frames?|samples?|examples?|sentences?|texts?|"
                         r"docs?|documents?|rows|records|batches|dataset|loader|generator|gen|data|"
                         r"x_?(?:train|test|val|valid)|(?:train|test|val|valid)_?x|"
                         r"inputs|queries|urls|videos?|tweets|reviews|"
                         r"lines|words|tokens|audio|clips|pages|items)s?\b", re.I)


_FOLD_WORDS = frozenset({"fold", "folds", "kfold", "kfolds"})


def _looks_like_data(text: str) -> bool:
    return bool(_DATA_WORDS.search(text.replace(".", " ").replace("_", " ")) or _DATA_WORDS.search(text))


def _data_by_name(text: str) -> Repetition:
    """A loop over what its name says is data (``files``, ``test_list``, ``range(len(images))``,
    ``range(data_size)``): per item, as a bound named ``epochs`` is per step, since names are how
    people size loops in code. A folder's files (``os.listdir``) are not read this way: how many
    is not in the code, and demos list a handful. Data split into cross-validation folds
    (``data_folds``, ``x_folds``) is a handful of passes, one model per fold, as a splitter's
    folds are."""
    return _folds(text) or Repetition(PER_ITEM, basis=text)


def _folds(text: str) -> Repetition | None:
    """``text`` names cross-validation folds: a few passes, one model per fold."""
    if _FOLD_WORDS.intersection(re.split(r"[\W_]+", text.lower())):
        return Repetition(SMALL, basis=f"{text}, cross-validation folds", known=False)
    return None


def _unsized(text: str) -> Repetition:
    return Repetition(UNKNOWN, basis=text, known=False, unsized_loop=True)


def _counted(count: int, text: str) -> Repetition:
    return Repetition(COUNT, count, text)


def _named(inner: Repetition, text: str) -> Repetition:
    """The repetition of what ``text`` names (a name, ``len(x)``, a comprehension over it), shown
    as ``text``; a small one keeps its own reason (``model.layers, the layers of a model``), and
    data split into folds under a name that says so (``x_folds = [x[i] for i in ...]``) is folds."""
    if inner.kind == SMALL:
        return inner
    return (_folds(text) if inner.kind == PER_ITEM else None) or replace(inner, basis=text)


# Calls whose result has as many items as one argument states: random draws of a size, and
# numpy's splits into a number of sections (np.array_split(x_test, 10) gives ten chunks); for
# each, the (position, keyword) of that argument.
_STATED_SIZES = {"numpy.random.choice": (1, "size"), "random.sample": (1, "k"), "random.choices": (None, "k"),
                 "numpy.random.randint": (2, "size"), "numpy.array_split": (1, "indices_or_sections"),
                 "numpy.split": (1, "indices_or_sections")}


def _stated_size(context: TFContext, call: cst.Call, imported: str) -> int | None:
    """How many items ``call`` yields (``random.sample(files, 5)``, ``np.array_split(x, 10)``),
    when the size is a number the code states (a list of split indices is not)."""
    where = _STATED_SIZES.get(imported)
    if where is None:
        return None
    position, keyword = where
    plain = [a.value for a in call.args if a.keyword is None and not a.star]
    size = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    if size is None and position is not None and len(plain) > position:
        size = plain[position]
    return context.int_value(size, AT_POINT) if size is not None else None


def _range_by_name(context: TFContext, call: cst.Call, text: str) -> Repetition:
    """``range(epochs)``, ``range(len(images))``, ``trange(args.steps)``: an unknown bound whose
    name says what it counts."""
    bounds = [a.value for a in call.args if a.keyword is None]
    bound = bounds[1] if len(bounds) >= 2 else (bounds[0] if bounds else None)
    if bound is None:
        return _unsized(text)
    words = re.sub(r"\W+", "_", code_of(bound))  # args.epochs, conf['ENV']['max_timesteps']
    start = int_literal(bounds[0]) if len(bounds) >= 2 else 0
    if start is not None:
        passed = None if _EPOCH_WORDS.search(words.lower()) else _parameter_ints(context, bound)
        if passed is not None:
            # range(steps_ahead) in `def forecast(model, window, steps_ahead)` called with 4: the
            # callers of this module decide the count. Not an epoch count: what runs per epoch is
            # read as such below, whatever the number of epochs.
            most = max(passed)
            return _counted(max(0, most - start), f"{text}, {code_of(bound)}={most} where it is called")
        option = context.facts_of(OptionDefaults).default_of(bound)
        if option is not None:
            # range(args.rounds) with `--rounds` defaulting to 3: the count a run gets unless the
            # user passes another value.
            return _counted(max(0, option[1] - start), f"{text}, {option[0]}={option[1]} by default")
    if len(bounds) < 2 or isinstance(bounds[0], cst.Integer):
        window = _windowed_length(context, bound)
        if window is not None:
            # range(len(series) - window_size): one window per element of a sequence, as many
            # iterations as the data has items (a start computed from the data is not this).
            return _data_by_name(f"{text}, a window per item of {code_of(window)}")
    if isinstance(bound, cst.Call) and dotted_name(bound.func) == "len" and bound.args:
        inner = _iterable(context, bound.args[0].value, 1)
        if inner.kind in (PER_ITEM, COUNT, SMALL):
            return _named(inner, text)
        return _data_by_name(text) if _looks_like_data(code_of(bound)) else Repetition(UNKNOWN, basis=text, known=False)
    if _STEP_WORDS.search(words):
        return Repetition(PER_STEP, basis=text)  # epochs, steps, episodes: a training loop's count
    if _looks_like_data(words):
        return _data_by_name(text)
    return _unsized(text)


def _parameter_ints(context: TFContext, bound: cst.BaseExpression) -> list[int] | None:
    """The ints a parameter of the def around takes at every call of this module."""
    frame = context.function
    if not (isinstance(bound, cst.Name) and frame is not None and isinstance(frame.node, cst.FunctionDef)):
        return None
    return context.functions.parameter_ints(frame.node, bound.value)


def _windowed_length(context: TFContext, bound: cst.BaseExpression) -> cst.BaseExpression | None:
    """The sequence ``x`` of a bound ``len(x) - k`` or ``len(x) // k`` (a sliding window, a
    stride), also through names (``n = len(x)``; ``range(n - maxlen)``)."""
    windowed = False
    for _ in range(4):
        if isinstance(bound, cst.BinaryOperation) and isinstance(bound.operator, (cst.Subtract, cst.FloorDivide)):
            bound, windowed = bound.left, True
        elif isinstance(bound, cst.Name):
            value = context.value_of(bound, AT_POINT)
            if value is None or value is bound:
                return None
            bound = value
        else:
            break
    if windowed and isinstance(bound, cst.Call) and dotted_name(bound.func) == "len" and bound.args:
        return bound.args[0].value
    return None


def rebound_value(context: TFContext, name: str, earlier: tuple | None = None) -> tuple | None:
    """(value, earlier) of ``name`` at this point, ``earlier`` being (name, the values bound to it
    before that one), so that reading ``x`` inside ``x = f(x)`` (passed back as ``earlier``) gives
    the ``x`` bound before; None when the name is bound to nothing readable (a parameter, an
    unpacking) or the chain of rebindings is used up."""
    if earlier is not None and name == earlier[0]:
        values = earlier[1]
        return (values[-1], (name, values[:-1])) if values else None
    found = context.binding(name, AT_POINT)
    if found is None or found.value is None or found.unpacked:
        return None
    values = found.scope.assignments.get(name, [])
    index = next((i for i, v in enumerate(values) if v is found.value), 0)
    return found.value, (name, values[:index])


def one_sample(context: TFContext, expr: cst.BaseExpression) -> bool:
    """The **payload**: ``expr`` is one sample made a batch of one (``x[None]``, ``x[np.newaxis]``,
    ``np.expand_dims(x, 0)``, ``x.reshape(1, ...)``, ``np.array([x])``, ``x[-1:]``,
    ``x[i:i + 1]``), itself or through what keeps its batch dimension: the name it was bound to
    (``x = preprocess_input(x)`` reads the ``x`` bound before), a call on it, arithmetic."""
    earlier: tuple | None = None
    for _ in range(8):
        if isinstance(expr, cst.Name):
            step = rebound_value(context, expr.value, earlier)
            if step is None or step[0] is expr:
                return False
            expr, earlier = step
            continue
        if isinstance(expr, cst.Subscript):
            return any(_adds_an_axis(context, e.slice) or _one_row(e.slice) for e in expr.slice)
        if isinstance(expr, cst.BinaryOperation):
            expr = expr.left  # x[None] / 255.0
            continue
        if not isinstance(expr, cst.Call):
            return False
        name = (context.imported_name(expr.func) or dotted_name(expr.func) or "").rsplit(".", 1)[-1]
        args = [a for a in expr.args if a.keyword is None]
        axis = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "axis"),
                    args[1].value if len(args) > 1 else None)
        if name == "expand_dims":
            return isinstance(axis, cst.Integer) and axis.value == "0"
        if name == "reshape" and isinstance(expr.func, cst.Attribute) and args:
            first = args[0].value
            first = first.elements[0].value if isinstance(first, cst.Tuple) and first.elements else first
            return isinstance(first, cst.Integer) and first.value == "1"
        if name in ("array", "asarray"):
            return bool(args) and isinstance(args[0].value, cst.List) and len(args[0].value.elements) == 1
        if not args:
            return False
        expr = args[0].value  # preprocess_input(x), tf.cast(x, ...): the batch stays what it was
    return False


def _adds_an_axis(context: TFContext, index: cst.BaseSlice) -> bool:
    value = index.value if isinstance(index, cst.Index) else None
    return isinstance(value, cst.Name) and value.value == "None" \
        or value is not None and (context.imported_name(value) or "") == "numpy.newaxis"


def _one_row(index: cst.BaseSlice) -> bool:
    """``-1:`` or ``i:i + 1``: a slice of one row."""
    if not isinstance(index, cst.Slice):
        return False
    lower, upper = index.lower, index.upper
    if isinstance(lower, cst.UnaryOperation) and isinstance(lower.operator, cst.Minus) \
            and isinstance(lower.expression, cst.Integer) and lower.expression.value == "1" and upper is None:
        return True
    return isinstance(upper, cst.BinaryOperation) and isinstance(upper.operator, cst.Add) \
        and isinstance(upper.right, cst.Integer) and upper.right.value == "1" and lower is not None \
        and code_of(upper.left) == code_of(lower)


def _every_nth(loops: list, node: cst.CSTNode) -> int | None:
    """The product of the n of each ``if <counter> % n == 0`` (a literal n) that ``node`` sits
    under inside the outermost of ``loops``, whichever loop's body holds the test; None when
    there is none."""
    every = 1
    for statement in loop_statements(loops[0]):
        test = statement.test if isinstance(statement, cst.If) else None
        if isinstance(test, cst.Comparison) and isinstance(test.left, cst.BinaryOperation) \
                and isinstance(test.left.operator, cst.Modulo) and isinstance(test.left.right, cst.Integer) \
                and test.left.right.evaluated_value > 1 and contains(statement.body, node):
            every *= test.left.right.evaluated_value
    return every if every > 1 else None


# An `if` that tests which key a person pressed (OpenCV's waitKey, pygame's key events).
_KEY_PRESS = re.compile(r"\bord\(|waitKey|KEYDOWN|\bK_\w+|\.key\b")


def _paced(context: TFContext, loop: cst.For | cst.While) -> str | None:
    """What in ``loop``'s own statements makes each pass wait for a person: ``input()``, OpenCV's
    ``waitKey(0)`` (``waitKey(1)`` only polls). Not ``time.sleep``: a frame interval
    (``sleep(1 / 25)`` in a real-time detector) is the budget a predict's set-up eats into."""
    for statement in loop_statements(loop):
        if isinstance(statement, cst.SimpleStatementLine):
            for call in context.calls_in(statement):
                name = dotted_name(call.func) or ""
                if name == "input":
                    return "a line typed (input())"
                if name.rpartition(".")[2] == "waitKey" and call.args and int_literal(call.args[0].value) == 0:
                    return "a key press (waitKey(0))"
        elif isinstance(statement, (cst.If, cst.While)):
            test = statement.test
            if any(type(n) is cst.Call and dotted_name(n.func) == "input" for n in [test, *context.nodes_in(test)]):
                return "a line typed (input())"  # `if input(...) == "q":`
    return None


# A wait this long or longer each pass paces a loop (OpenCV's waitKey counts milliseconds).
_PACING_SECONDS = 1


def _waits_an_interval(context: TFContext, loop: cst.For | cst.While) -> tuple[str, bool] | None:
    """(words, the interval is a setting) for a fixed wait in ``loop``'s own statements:
    ``time.sleep(x)`` with ``x`` a setting (``FLAGS.eval_interval_secs``, ``interval``) or a
    literal of a second or more, or OpenCV's ``waitKey(n)`` with n of a second or more. A frame
    interval (``sleep(0.04)``, ``sleep(1 / fps)``) is the budget of a real-time loop, not a pause."""
    for statement in loop_statements(loop):
        if isinstance(statement, cst.SimpleStatementLine):
            calls = context.calls_in(statement)
        elif isinstance(statement, cst.If):  # `if cv2.waitKey(2000) & 0xFF == ord("q"):`
            calls = [n for n in [statement.test, *context.nodes_in(statement.test)] if type(n) is cst.Call]
        else:
            continue
        for call in calls:
            if not call.args:
                continue
            name = context.imported_name(call.func) or dotted_name(call.func) or ""
            value = call.args[0].value
            if name == "time.sleep":
                literal = _number(value)
                if literal is None and isinstance(value, (cst.Name, cst.Attribute)):
                    return f"time.sleep({code_of(value)})", True
                if literal is not None and literal >= _PACING_SECONDS:
                    return f"time.sleep({code_of(value)})", False
            elif name.rpartition(".")[2] == "waitKey":
                literal = _number(value)
                if literal is not None and literal >= _PACING_SECONDS * 1000:
                    return f"waitKey({code_of(value)})", False
    return None


def _number(expr: cst.BaseExpression) -> float | None:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value)
    return None


def _whole_run_per_pass(context: TFContext, loop: cst.For | cst.While, node: cst.CSTNode) -> str | None:
    """Words for a pass of ``loop`` that runs a whole nested run, a ``for`` with a loop inside
    (episodes of steps; a polling ``while`` is not a run), beside ``node`` in its own statements
    or in the function of this module that ``node`` calls (``agent.launch_train()``)."""
    def nested_run(body: cst.CSTNode) -> cst.CSTNode | None:
        for inner in context.nodes_in(body):
            if isinstance(inner, cst.For) and not contains(inner, node) \
                    and any(isinstance(n, (cst.For, cst.While)) for n in context.nodes_in(inner.body)):
                return inner
        return None

    inner = nested_run(loop.body)
    if inner is not None:
        return f"run of the loop at line {context.functions.line_of(inner)}"
    if isinstance(node, cst.Call):
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        definition = _module_function(context, name) if name else None
        if definition is not None and nested_run(definition.body) is not None:
            return f"run of {name}()"
    return None


def _module_function(context: TFContext, name: str) -> cst.FunctionDef | None:
    """The one function or method of this module named ``name``."""
    found = [n for n in context.scopes if isinstance(n, cst.FunctionDef) and n.name.value == name]
    return found[0] if len(found) == 1 else None


def _guarded_by(loop: cst.For | cst.While, node: cst.CSTNode, test_words: re.Pattern) -> bool:
    """``node`` sits, in ``loop``'s body, under an ``if`` whose test matches ``test_words``."""
    return any(isinstance(statement, cst.If) and test_words.search(code_of(statement.test))
               and contains(statement.body, node) for statement in loop_statements(loop))


def _chosen_iterations(loop: cst.For | cst.While, node: cst.CSTNode) -> tuple[int, str] | None:
    """(n, test) when ``node`` sits, in ``loop``'s body, under an ``if`` that compares the loop's
    counter (its target, or a name the body increments) with n fixed values: ``if epoch == 0``,
    ``if (run_cnt == 0)``, ``if episode == 80 or episode == 120``, ``if step in (10, 20)``."""
    statements = loop_statements(loop)
    counters = set(target_names(loop.target)) if isinstance(loop, cst.For) else set()
    counters |= {small.target.value for line in statements if isinstance(line, cst.SimpleStatementLine)
                 for small in line.body if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name)}
    for statement in statements:
        if isinstance(statement, cst.If):
            count = _literal_choices(statement.test, counters)
            if count and contains(statement.body, node):
                return count, code_of(statement.test)
    return None


def _literal_choices(test: cst.BaseExpression, counters: set) -> int | None:
    """How many values of a counter ``test`` accepts: ``i == 0`` 1, ``i == 3 or i == 7`` 2,
    ``i in (10, 20, 30)`` 3, ``i < 2`` 2; None for anything else."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        left, right = _literal_choices(test.left, counters), _literal_choices(test.right, counters)
        return left + right if left and right else None
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.left, cst.Name) and test.left.value in counters):
        return None
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(operator, cst.Equal) and _fixed(right, counters):
        return 1
    bound = int_literal(right)
    if bound is not None and bound > 0 and isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
        # `if x < 1:` on a counter that starts at 0: the first passes only.
        return bound + isinstance(operator, cst.LessThanEqual)
    if isinstance(operator, cst.In) and isinstance(right, (cst.Tuple, cst.List, cst.Set)) and right.elements \
            and all(_fixed(e.value, counters) for e in right.elements):
        return len(right.elements)
    return None


def _fixed(expr: cst.BaseExpression, counters: set) -> bool:
    """A value the loop does not change: a literal, a name it does not count with, arithmetic on
    those (``n_epochs - 1``, ``n_train_episodes // 2``)."""
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.Name):
        return expr.value not in counters
    if isinstance(expr, cst.Attribute):
        return _fixed(expr.value, counters)
    if isinstance(expr, cst.BinaryOperation):
        return _fixed(expr.left, counters) and _fixed(expr.right, counters)
    if isinstance(expr, cst.UnaryOperation):
        return _fixed(expr.expression, counters)
    return False
