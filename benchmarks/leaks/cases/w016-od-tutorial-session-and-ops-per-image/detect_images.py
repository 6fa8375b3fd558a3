# Reproduction (our own minimal rewrite) of the inference loop of the Object Detection
# API notebook (object_detection_tutorial.ipynb, TF 1.8) that
# https://github.com/tensorflow/models/issues/4467 reports as using the frozen .pb
# inefficiently: every image opens a new Session on the detection graph, and, for mask
# models, adds squeeze/slice/reframe ops to that graph before running it.
import glob

import numpy as np
import tensorflow as tf
from PIL import Image

from object_detection.utils import ops as utils_ops

FROZEN_GRAPH = "mask_rcnn_inception_v2_coco/frozen_inference_graph.pb"

detection_graph = tf.Graph()
with detection_graph.as_default():
    graph_def = tf.GraphDef()
    with tf.gfile.GFile(FROZEN_GRAPH, "rb") as frozen:
        graph_def.ParseFromString(frozen.read())
    tf.import_graph_def(graph_def, name="")


def detect_one_image(image, graph):
    with graph.as_default():
        with tf.Session() as sess:
            names = {out.name for op in tf.get_default_graph().get_operations() for out in op.outputs}
            tensors = {}
            for key in ["num_detections", "detection_boxes", "detection_scores",
                        "detection_classes", "detection_masks"]:
                if key + ":0" in names:
                    tensors[key] = tf.get_default_graph().get_tensor_by_name(key + ":0")
            if "detection_masks" in tensors:
                boxes = tf.squeeze(tensors["detection_boxes"], [0])
                masks = tf.squeeze(tensors["detection_masks"], [0])
                kept = tf.cast(tensors["num_detections"][0], tf.int32)
                boxes = tf.slice(boxes, [0, 0], [kept, -1])
                masks = tf.slice(masks, [0, 0, 0], [kept, -1, -1])
                reframed = utils_ops.reframe_box_masks_to_image_masks(
                    masks, boxes, image.shape[0], image.shape[1])
                reframed = tf.cast(tf.greater(reframed, 0.5), tf.uint8)
                tensors["detection_masks"] = tf.expand_dims(reframed, 0)
            image_input = tf.get_default_graph().get_tensor_by_name("image_tensor:0")
            return sess.run(tensors, feed_dict={image_input: np.expand_dims(image, 0)})


for path in sorted(glob.glob("test_images/*.jpg")):
    pixels = np.array(Image.open(path).convert("RGB"), dtype=np.uint8)
    detections = detect_one_image(pixels, detection_graph)
