"""The rule catalogue. Importing this package registers every rule, one module per family."""

from tf_memlint.checks import tracing  # noqa: F401  TFM1xx
