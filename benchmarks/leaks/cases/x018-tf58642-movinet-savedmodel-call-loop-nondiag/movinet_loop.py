# Reproduction of https://github.com/tensorflow/tensorflow/issues/58642 (TF 2.10): a MoViNet
# A2 classifier restored from its TF-Hub SavedModel with tf.keras.models.load_model is called
# on the same random clip in a loop; RAM climbs (69.3% to 72.7% in 30 calls) until the process
# crashes, with "5 out of the last 5 calls to <bound method Conv.call> triggered tf.function
# retracing" warnings. Minimal rewrite of the posted script, names ours; the path is ours.
import numpy as np
import psutil
import tensorflow as tf
from tqdm import tqdm

# registers the custom layers the SavedModel refers to
from official.projects.movinet.modeling import movinet, movinet_layers, movinet_model  # noqa: F401

SAVEDMODEL_DIR = "movinet_a2_base_kinetics600"

model = tf.keras.models.load_model(SAVEDMODEL_DIR, custom_objects={"tf": tf, "K": tf.keras.backend})
clip = np.random.random((1, 20, 256, 256, 3))
for i in tqdm(range(30)):
    if i % 3 == 0:
        used = psutil.virtual_memory()
        print(f"(i={i}) RAM used: {used.used / 1e9:.2f} GB ({used.percent}%)")
    model(clip)
