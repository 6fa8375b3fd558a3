"""Domain facts, one module per domain, each reached through the core context and owning its caches.

    context.arrays     arrays.py     NumPy arrays: kinds of origin, sizes in bytes
    context.splits     splits.py     arrays that hold a whole train/test split (load_data...)
    context.sessions   sessions.py   TF1 sessions and graphs: creation, runs, ops added, resets
    context.keras      keras.py      Keras models, eager training loops, tapes, eager tensors
    context.tracing    tracing.py    what TensorFlow traces, tf.function bindings, retracing,
                                     loops in traced code
    context.functions  functions.py  what a function of this module does, followed through its
                                     calls: the home of per-function summaries
                       repetition.py how often a place runs (loops of known size, repeated
                                     scopes): asked by every rule that judges repetition

A fact module is built once per linted module, from the core context (``tf_memlint.context``) and
the pre-pass results it needs; it asks the core for names, bindings, kinds and trip counts, and
other fact modules through the context (``self.context.tracing...``). The constants a fact module
tests against are public: the rules declare their gate triggers from them (see gate.py), so the
gate and the facts cannot disagree about a spelling.
"""
