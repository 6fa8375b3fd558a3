# Reproduction of https://github.com/tensorflow/tensorflow/issues/19049
# (minimal rewrite of the example discussed in the thread; names ours).
# Reported: memory leaks when sess.run fetches a slice of a tensor in a loop.
import tensorflow as tf
from pympler.tracker import SummaryTracker

tracker = SummaryTracker()
grid = tf.zeros([3, 4, 5])
sess = tf.Session()


def fetch_corner():
    return sess.run(grid[0, 0])


for _ in range(10):
    tracker.print_diff()
    corner = fetch_corner()
