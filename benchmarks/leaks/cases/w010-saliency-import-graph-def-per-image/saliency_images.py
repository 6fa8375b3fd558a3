# Reproduction (our own minimal rewrite) of the function posted in
# https://github.com/alexanderkroner/saliency/issues/7 (TF 1.13, the project's frozen
# SALICON model). The function is called once per image; memory rises with every image
# even with session.close() or clear_session(). The posted snippet ends at the
# import_graph_def call; the session run after it is our completion.
import glob

import numpy as np
import tensorflow as tf
from PIL import Image


def saliency_model(img):
    model_name = "model_salicon_cpu.pb"

    with tf.gfile.Open(model_name, "rb") as frozen:
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(frozen.read())

    input_img = tf.placeholder(tf.float32, (None, None, None, 3))

    [predicted_maps] = tf.import_graph_def(
        graph_def, input_map={"input": input_img}, return_elements=["output:0"]
    )

    session = tf.Session()
    saliency = session.run(predicted_maps, feed_dict={input_img: img[np.newaxis]})
    session.close()
    return saliency


for path in sorted(glob.glob("images/*.jpg")):
    picture = np.asarray(Image.open(path).convert("RGB"), dtype=np.float32)
    saliency_model(picture)
