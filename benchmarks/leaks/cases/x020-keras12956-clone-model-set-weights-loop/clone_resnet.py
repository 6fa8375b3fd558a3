# Reproduction of https://github.com/keras-team/keras/issues/12956 (Keras 2.2.4, TF 1.13
# backend): a ResNet50 is cloned with keras.models.clone_model and its weights copied layer
# by layer with set_weights, once per iteration; the clone stage goes from ~4 s to ~34 s and
# the set-weights stage from ~3 s to ~4 min by the 50th iteration.
# Minimal rewrite of the posted script (timing helper, clone, per-layer set_weights), names
# ours; the iteration count is ours.
import datetime

import keras


def hh_mm_ss(delta):
    hours, rest = divmod(delta.days * 86400 + delta.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return "%02d:%02d:%02d" % (hours, minutes, seconds)


source = keras.applications.resnet50.ResNet50(weights=None)

for iteration in range(100):
    start = datetime.datetime.now()
    clone = keras.models.clone_model(source)
    cloned = datetime.datetime.now()
    for clone_layer, source_layer in zip(clone.layers, source.layers):
        clone_layer.set_weights(source_layer.get_weights())
    copied = datetime.datetime.now()
    print(iteration, "clone", hh_mm_ss(cloned - start), "set_weights", hh_mm_ss(copied - cloned))
