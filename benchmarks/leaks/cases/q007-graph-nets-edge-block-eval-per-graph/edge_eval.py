# Reproduction of https://github.com/google-deepmind/graph_nets/issues/89
# (graph_nets on TF1 graph mode). The reporter's EdgeBlock subclass calls .eval() on the
# broadcast_*_to_edges results inside the block and connects the block once per input
# graph (2000 nodes, 10k-77k edges each); the wide-and-deep estimator part is elided.
# Names, the random graphs and the edge model are ours.
import numpy as np
import sonnet as snt
import tensorflow as tf
from graph_nets import blocks, utils_tf
from graph_nets.blocks import EdgeBlock


class EvalEdgeBlock(EdgeBlock):
    """EdgeBlock that pulls the broadcast values back into numpy for extra processing."""

    def _build(self, graph):
        receivers = blocks.broadcast_receiver_nodes_to_edges(graph).eval()
        senders = blocks.broadcast_sender_nodes_to_edges(graph).eval()
        globals_ = blocks.broadcast_globals_to_edges(graph).eval()
        edge_inputs = np.concatenate([graph.edges.eval(), receivers, senders, globals_], axis=-1)
        # ... processing of the numpy values elided ...
        return graph.replace(edges=self._edge_model(tf.constant(edge_inputs, tf.float32)))


def random_graph(num_nodes=2000, num_edges=30000):
    return {
        "globals": np.zeros([4], np.float32),
        "nodes": np.random.rand(num_nodes, 8).astype(np.float32),
        "edges": np.random.rand(num_edges, 4).astype(np.float32),
        "senders": np.random.randint(0, num_nodes, num_edges),
        "receivers": np.random.randint(0, num_nodes, num_edges),
    }


def main():
    edge_block = EvalEdgeBlock(edge_model_fn=lambda: snt.nets.MLP([16, 4]))
    with tf.Session() as sess:
        for step in range(200):
            graph = utils_tf.data_dicts_to_graphs_tuple([random_graph()])
            output = edge_block(graph)
            if step == 0:
                sess.run(tf.global_variables_initializer())
            edges = sess.run(output.edges)
            # ... edges fed to the estimator's model.train() elided ...
            print(step, edges.shape)


if __name__ == "__main__":
    main()
