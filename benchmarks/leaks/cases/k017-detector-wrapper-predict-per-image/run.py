# Reproduction of https://github.com/tensorflow/tensorflow/issues/41404
# Our minimal rewrite: the caller that feeds the Detector one image at a time lives in this module.
import glob

import cv2
import numpy as np

from detector import Detector

detector = Detector('detection_model.h5')
for path in sorted(glob.glob('frames/*.jpg')):
    image = cv2.imread(path).astype(np.float32) / 255.0
    boxes = detector.detect(image[np.newaxis, ...])
    print(path, boxes.shape)
