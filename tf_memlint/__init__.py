"""tf-memlint: a linter for TensorFlow memory anti-patterns, each rule backed by a measurement."""

__version__ = "0.1.0"
