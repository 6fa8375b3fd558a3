# Reproduction of https://github.com/uber-research/sbnet/issues/7
# (minimal rewrite of the posted loop; names ours). Each step draws a new random
# mask, wraps it in tf.constant and calls sbnet's reduce_mask op on it, then runs
# the session: two constants and a reduce_mask node are added to the graph per step.
import numpy as np
import tensorflow as tf

sbnet_module = tf.load_op_library("libsbnet.so")

BATCH = 50


def random_mask(shape, sparsity):
    return (np.random.rand(*shape) > sparsity).astype(np.float32)


def block_params():
    # stand-in for sbnet's calc_block_params on a 5x5 VALID conv over 28x28 inputs
    return {"bcount": [6, 6], "bsize": [5, 5], "boffset": [0, 0], "bstrides": [4, 4]}


def sample_active_blocks(steps=2000):
    params = block_params()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(steps):
            mask = random_mask([BATCH, 28, 28, 1], 0.90)
            mask_t = tf.constant(mask, dtype=tf.float32)
            reduced = sbnet_module.reduce_mask(
                mask_t,
                tf.constant(params["bcount"], dtype=tf.int32),
                bsize=params["bsize"],
                boffset=params["boffset"],
                bstride=params["bstrides"],
                tol=0.0,
                avgpool=True)
            indices, counts = sess.run([reduced.active_block_indices, reduced.bin_counts])
            if step % 100 == 0:
                print("step", step, "active blocks", counts)


if __name__ == "__main__":
    sample_active_blocks()
