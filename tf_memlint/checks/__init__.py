"""The rule catalogue. Importing this package registers every rule, one module per family."""

from tf_memlint.checks import tracing  # noqa: F401  TFM1xx
from tf_memlint.checks import sessions  # noqa: F401  TFM2xx
from tf_memlint.checks import mapped  # noqa: F401  TFM3xx
from tf_memlint.checks import training  # noqa: F401  TFM4xx
from tf_memlint.checks import keras_calls  # noqa: F401  TFM405-TFM406
from tf_memlint.checks import pipelines  # noqa: F401  TFM302
from tf_memlint.checks import whole_split  # noqa: F401  TFM407
from tf_memlint.checks import devices  # noqa: F401  TFM5xx
