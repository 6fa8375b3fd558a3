# Reproduction (our own minimal rewrite) of the model factory imported by the Flask app in
# https://github.com/matterport/Mask_RCNN/issues/2716 (Mask R-CNN, Keras 2 on TensorFlow 1.x).
# The class count and weight path are ours.
import mrcnn.model as modellib
from mrcnn.config import Config

WEIGHTS_PATH = "logs/mask_rcnn_objects.h5"


class InferenceConfig(Config):
    NAME = "objects"
    NUM_CLASSES = 1 + 1
    GPU_COUNT = 1
    IMAGES_PER_GPU = 1


def create_model():
    model = modellib.MaskRCNN(mode="inference", config=InferenceConfig(), model_dir="logs")
    model.load_weights(WEIGHTS_PATH, by_name=True)
    return model
