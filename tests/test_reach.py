"""Reach across modules: the command follows the project's imports, flake8 sees one file."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import every_rule
from tf_memlint.cli import main
from tf_memlint.rule import all_rules

MODELS = '''
from tensorflow import keras


def build():
    return keras.models.load_model("m.h5")


def create_model():
    model = build()
    return model
'''
OPS = '''
import tensorflow.compat.v1 as tf


def copy_weights(agent, target):
    return [tf.assign(t, a) for t, a in zip(target, agent)]
'''
GRAPH = '''
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()
'''
APP = '''
from flask import Flask

from pkg import models
from .models import create_model
from .ops import copy_weights

app = Flask(__name__)


@app.route("/", methods=["POST"])
def index():
    model = create_model()  # expect: TFM403
    return model.detect(1)


def search():
    for i in range(1000):
        models.build()  # expect: TFM403


def train(sess, step, agent, target):
    for i in range(1000):
        sess.run(step)
        sess.run(copy_weights(agent, target))  # expect: TFM202
'''
LOOKALIKE = '''
from pkg.models import create_model

MODEL = create_model()


def serve(x):
    return MODEL(x)


def train(x, y):
    model = create_model()
    for epoch in range(100):
        model.fit(x, y)
'''


def _write_package(tmp_path, package_name, modules):
    """``modules`` (name -> source) as the package ``package_name`` under ``tmp_path``."""
    package = tmp_path / package_name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    return package


def _project(tmp_path):
    return _write_package(tmp_path, "pkg", {"models": MODELS, "ops": OPS, "graph": GRAPH, "app": APP,
                                            "look": LOOKALIKE})


def _expected(path):
    return {(n, line.split("# expect: ")[1].strip()) for n, line in enumerate(path.read_text().splitlines(), 1)
            if "# expect: " in line}


def test_command_reaches_across_modules(tmp_path, capsys, monkeypatch):
    package = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    status = main(["--isolated", *every_rule(), "--format", "text", "pkg"])
    out = capsys.readouterr().out
    found = {(int(line.split(":")[1]), line.split()[1]) for line in out.splitlines() if line.startswith("pkg/app.py")}
    assert found == _expected(package / "app.py"), out
    assert "pkg/look.py" not in out and "pkg/models.py" not in out and "pkg/ops.py" not in out, out
    assert "via create_model(), models.py:" in out and "-> build(), models.py:" in out
    assert status == 1


def test_command_on_one_file_of_the_project_still_reaches_the_given_files_only(tmp_path, capsys, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    main(["--isolated", *every_rule(), "pkg/app.py"])
    assert capsys.readouterr().out == ""  # models.py was not given: nothing known about it


def test_flake8_is_in_file_only(tmp_path):
    _project(tmp_path)
    completed = subprocess.run([sys.executable, "-m", "flake8", "--isolated", f"--select={','.join(all_rules())}", "pkg"],
                               capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert completed.stdout == "", completed.stdout


def test_project_tables_are_built_only_for_rules_that_reach_across_modules(tmp_path, capsys, monkeypatch):
    """Building the tables reads every given file: skipped when no enabled rule follows calls
    into other modules, done when one is selected."""
    from tf_memlint import project

    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    built = []
    real_build = project.build
    monkeypatch.setattr(project, "build", lambda paths, *store: built.append(paths) or real_build(paths, *store))
    reaching = sorted(code for code, rule in all_rules().items() if rule.reaches_across_modules)
    others = [code for code in all_rules() if code not in reaching]
    assert reaching and others
    main(["--isolated", "--select", ",".join(others), "pkg"])
    assert built == []
    main(["--isolated", "--extend-select", reaching[0], "pkg"])
    assert len(built) == 1 and any(path.endswith("models.py") for path in built[0])
    capsys.readouterr()


def _lint_package(tmp_path, capsys, monkeypatch, package_name, modules):
    """Write ``modules`` (name -> source) as a package, lint it with the command and every rule,
    and check that each module reports exactly the findings its ``# expect:`` lines name (none
    for a module without them). Returns the command's output."""
    package = _write_package(tmp_path, package_name, modules)
    monkeypatch.chdir(tmp_path)
    main(["--isolated", *every_rule(), "--confidence", "low", "--format", "text", package_name])
    out = capsys.readouterr().out
    for name in modules:
        found = {(int(line.split(":")[1]), line.split()[1]) for line in out.splitlines()
                 if line.startswith(f"{package_name}/{name}.py")}
        assert found == _expected(package / f"{name}.py"), out
    return out


SCORING = '''
from tensorflow import keras

MODEL = keras.models.load_model("m.h5")


def score(x):
    return MODEL.predict(x)
'''
SESSIONS = '''
import tensorflow.compat.v1 as tf


def evaluate(tensor):
    sess = tf.InteractiveSession()  # expect: TFM201
    return tensor.eval()
'''
CONSUMER = '''
from flask import Flask

from .scoring import score
from .sessions import evaluate

app = Flask(__name__)


def stream(frames):
    for frame in frames:
        score(frame)  # expect: TFM404


def check(tensors):
    for tensor in tensors:
        evaluate(tensor)  # expect: TFM201


@app.route("/score", methods=["POST"])
def handle(x):
    return str(score(x))  # expect: TFM404


def once(x):
    return score(x)
'''


def test_command_reaches_predict_and_sessions_across_modules(tmp_path, capsys, monkeypatch):
    """TFM404 and TFM201 through another module's helper: the consumer imports no Keras and no
    TensorFlow, so the era of the ``predict`` is the helper's module's (project.py)."""
    out = _lint_package(tmp_path, capsys, monkeypatch, "svc",
                        {"scoring": SCORING, "sessions": SESSIONS, "consumer": CONSUMER})
    assert "via score(), scoring.py:" in out and "via evaluate(), sessions.py:" in out, out
    # flake8 sees one file: consumer.py calls nothing it can see.
    completed = subprocess.run([sys.executable, "-m", "flake8", "--isolated", f"--select={','.join(all_rules())}",
                                "svc/consumer.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert completed.stdout == "", completed.stdout


AGENTS = '''
import numpy as np
from tensorflow import keras


class DQNAgent:
    def __init__(self, actions):
        self.model = self._build_model(actions)

    def _build_model(self, actions):
        return keras.Sequential([keras.layers.Dense(actions)])

    def act(self, state):
        return int(np.argmax(self.model.predict(state[None])[0]))  # expect: TFM404

    def replay(self, batch):
        for state in batch:
            self.model.predict(state[None])  # expect: TFM404
'''
RUNNER = '''
from .agents import DQNAgent


class Trainer:
    def __init__(self):
        self.agent = DQNAgent(4)

    def episode(self, env):
        state, done = env.reset(), False
        while not done:
            state, reward, done, _ = env.step(self.agent.act(state))  # expect: TFM404


def play(env, episodes):
    agent = DQNAgent(4)
    for _ in range(episodes):
        state, done = env.reset(), False
        while not done:
            state, reward, done, _ = env.step(agent.act(state))  # expect: TFM404


def search(configs):
    for actions in configs:
        DQNAgent(actions)  # expect: TFM403


def replay_once(batch):
    agent = DQNAgent(4)
    agent.replay(batch)
    return agent.act(batch[0])
'''


def test_command_reaches_methods_of_another_modules_classes(tmp_path, capsys, monkeypatch):
    """An agent class in one module, its episode loop in another (the usual shape of an RL
    project): the loop calling ``agent.act()`` / ``self.agent.act()``, whose method predicts on
    the model the object built, gets the finding; so does a class built per configuration. The
    entry point itself is reported in its own module too, as the plugin reports it (one sample per
    call of ``act``, whose callers that module does not show). A method called once, and a method
    whose own loop predicts (reported there), stay silent."""
    out = _lint_package(tmp_path, capsys, monkeypatch, "rl", {"agents": AGENTS, "runner": RUNNER})
    assert "via DQNAgent.act(), agents.py:" in out, out


def test_an_in_file_chain_names_the_def_line_of_each_helper():
    """FunctionFacts.line_of: the line of the helper's ``def`` (not its decorator), the same
    whether the engine places it from one top-level statement or the whole module is used."""
    from tf_memlint.context import TFContext
    from tf_memlint.engine import lint_source
    from tf_memlint.syntax import dotted_name

    import libcst as cst

    source = textwrap.dedent("""\
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()


        @staticmethod
        def build(v):
            return tf.reduce_mean(v)


        def make(v):
            return build(v)


        sess = tf.Session()
        for i in range(1000):
            sess.run(make(i))
        """)
    findings = lint_source(source, ["TFM202"])
    assert [f.code for f in findings] == ["TFM202"]
    assert "make(), line 11" in findings[0].message and "build(), line 7" in findings[0].message, findings
    module = cst.parse_module(source)
    by_hand = TFContext(module)  # no source or tree: the whole module's positions
    defs = [n for n in by_hand.walked.events if isinstance(n, cst.FunctionDef)]
    assert [(dotted_name(d.name), by_hand.functions.line_of(d)) for d in defs] == [("build", 7), ("make", 11)]


TF1_AGENTS = '''
import tensorflow.compat.v1 as tf


class Agent:
    def __init__(self, sess, train_op):
        self.sess, self.train_op = sess, train_op

    def learn(self, feed):
        self.sess.run(self.train_op, feed_dict=feed)
'''
TF1_RUNNER = '''
import tensorflow.compat.v1 as tf

from .agents import Agent


def train(replay, sess):
    agent = Agent(sess, None)
    while True:
        batch = replay.sample()
        reward = tf.reduce_mean(batch)  # expect: TFM202
        agent.learn({"batch": batch})


def report(names):
    for name in names:
        print(tf.constant(name))
'''


def test_command_sees_a_session_run_through_another_modules_method(tmp_path, capsys, monkeypatch):
    """TFM202: the loop builds ops and runs the session through ``agent.learn()``, whose
    ``self.sess.run`` is in another module (project.py reads ``self.sess`` as a session)."""
    _lint_package(tmp_path, capsys, monkeypatch, "rl", {"agents": TF1_AGENTS, "runner": TF1_RUNNER})


FACTORY = '''
import tensorflow as tf


def build_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    model.compile("adam", "mse")
    return model


def build_pair():
    return tf.keras.Sequential([tf.keras.layers.Dense(4)]), 4
'''

PLAYER = '''
import gym
import numpy as np

from .factory import build_model, build_pair

model = build_model()
pair, width = build_pair()
env = gym.make("CartPole-v1")
for episode in range(1000):
    state, done = env.reset(), False
    while not done:
        action = np.argmax(model.predict(state[None], verbose=0))  # expect: TFM404
        state, reward, done, _ = env.step(action)
        pair.predict(state[None], verbose=0)
'''


def test_command_knows_a_model_another_module_builds(tmp_path, capsys, monkeypatch):
    """The commonest layout: models.py builds the network, the script that imports it (and no
    Keras of its own) predicts per environment step. What a factory returns crosses modules;
    a tuple holding a model is not one."""
    out = _lint_package(tmp_path, capsys, monkeypatch, "proj", {"factory": FACTORY, "player": PLAYER})
    assert "[per step: while not done" in out, out


PROCESSOR = '''
from tensorflow.keras.models import load_model


def process_image(image):
    model = load_model("classifier.h5")  # expect: TFM408
    return model.predict(image)


def _private(image):
    return image
'''
WEB_SIBLING = '''
from flask import Flask, request
import processor as images  # a script's sibling: python web/faces.py puts web/ first on sys.path

app = Flask(__name__)


@app.route("/classify", methods=["POST"])
def classify():
    return str(images.process_image(request.files["image"].read()))  # expect: TFM403
'''
WEB_STAR = '''
from flask import Flask, request
from processor import *

app = Flask(__name__)


@app.route("/upload", methods=["POST"])
def upload():
    return str(process_image(request.files["image"].read()))  # expect: TFM403
'''


def test_command_links_a_sibling_module_and_a_star_import(tmp_path, capsys, monkeypatch):
    """Web apps run as scripts import the module beside them by its bare name, inside a package
    too, or take all of it with ``from helpers import *``: the loader per request crosses both."""
    out = _lint_package(tmp_path, capsys, monkeypatch, "web",
                        {"processor": PROCESSOR, "faces": WEB_SIBLING, "uploads": WEB_STAR})
    assert "per request: classify() handles requests" in out and "per request: upload() handles requests" in out, out


CACHED_LOADER = '''
import tensorflow as tf

MODEL = None


def get_model():
    global MODEL
    if MODEL is None:
        MODEL = tf.keras.models.load_model("mask_detector.h5")
    return MODEL
'''
CACHED_CALL = '''
import tensorflow as tf

model = None


def load_model():
    return tf.keras.applications.MobileNetV2(weights=None)


def compress(image):
    global model
    if model is None:
        model = load_model()
    return model(image)
'''
CACHED_ROUTES = '''
import numpy as np
from fastapi import FastAPI
from loader import get_model
from compression import compress

app = FastAPI()


@app.post("/mask")
async def mask():
    model = get_model()
    return model(np.zeros((1, 224, 224, 3)))


@app.post("/compress")
async def compress_image():
    return compress(np.zeros((1, 224, 224, 3)))
'''


def test_command_reads_another_modules_cached_loader_as_one_model(tmp_path, capsys, monkeypatch):
    """A loader of another module that builds under a cache test (``if MODEL is None:`` on a
    global) returns the one model, whether it builds there or calls a builder of its own: no
    model per request, as within one file."""
    _lint_package(tmp_path, capsys, monkeypatch, "api",
                  {"loader": CACHED_LOADER, "compression": CACHED_CALL, "routes": CACHED_ROUTES})


def test_a_module_that_runs_a_session_builds_into_a_graph_across_modules(tmp_path, capsys, monkeypatch):
    """A helper module that runs a session on an op it builds (`sess.run(tf.truncated_normal(...))`),
    with no Session() or placeholder of its own, is in TF1 graph mode, as FunctionFacts.graph_mode
    says in the file: the trainer calling it per batch in another module grows the graph."""
    _write_package(tmp_path, "noisy", {
        "utils": '''
            import tensorflow as tf

            def add_noise(data, sigma, sess):
                return data + sigma * sess.run(tf.random.truncated_normal(data.shape))
            ''',
        "train": '''
            import tensorflow as tf
            from .utils import add_noise

            def train(sess, batches, train_op):
                for batch in batches.take(100000):
                    noisy = add_noise(batch, 0.1, sess)  # expect: TFM202
                    sess.run(train_op, feed_dict={"x:0": noisy})
            '''})
    monkeypatch.chdir(tmp_path)
    main(["--isolated", *every_rule(), "--format", "text", "noisy"])
    out = capsys.readouterr().out
    assert "noisy/train.py:7:" in out and "TFM202" in out and "via add_noise(), utils.py:" in out, out
