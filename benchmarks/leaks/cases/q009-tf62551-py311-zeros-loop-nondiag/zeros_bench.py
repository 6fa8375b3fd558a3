# Reproduction of https://github.com/tensorflow/tensorflow/issues/62551
# (TF 2.15 / tf-nightly, Python 3.11 vs 3.10 in plain python:3.1x docker images).
# Same calls and loop sizes as the report: tf.zeros(shape=(1,)) run eagerly and through
# one tf.function, 100 x 5000 calls each, RSS sampled with psutil. Names and the final
# printout are ours.
import sys
import time

import psutil
import tensorflow as tf

process = psutil.Process()


def bench(fn):
    start = time.monotonic()
    samples = []
    for _ in range(100):
        for _ in range(5000):
            fn()
        samples.append(process.memory_info().rss / 1024 ** 2)
    return samples[-1] - samples[0], time.monotonic() - start


def make_zeros():
    return tf.zeros(shape=(1,))


traced_zeros = tf.function(make_zeros)


if __name__ == "__main__":
    print("PYTHON VERSION", sys.version)
    print("TF VERSION", tf.__version__)
    make_zeros()  # warmup
    traced_zeros()

    growth, elapsed = bench(make_zeros)
    print(f"EAGER memory growth {growth:.1f} MB in {elapsed:.1f} s")

    growth, elapsed = bench(traced_zeros)
    print(f"TF FUNC memory growth {growth:.1f} MB in {elapsed:.1f} s")
