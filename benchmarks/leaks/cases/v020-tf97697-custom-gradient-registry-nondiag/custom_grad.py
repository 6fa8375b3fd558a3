# Reproduction of https://github.com/tensorflow/tensorflow/issues/97697
# (minimal rewrite of the posted script, names ours).
# Reported: on TF 2.19, a @tf.custom_gradient function used inside a tf.function keeps its
# forward results alive forever: the gradient closure captures `result` and is stored in the
# global gradient registry, so the tensors are never garbage collected.
import tensorflow as tf


@tf.custom_gradient
def doubled(x):
    def backward(upstream):
        return upstream * 0.1

    return x * 2, backward


def run_once(value):
    @tf.function
    def forward_and_grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = doubled(x)
            dy_dx = tape.gradient(y, x)
        return y, dy_dx

    print(forward_and_grad(value))


if __name__ == "__main__":
    for _ in range(4):
        run_once(tf.constant(1.0))
