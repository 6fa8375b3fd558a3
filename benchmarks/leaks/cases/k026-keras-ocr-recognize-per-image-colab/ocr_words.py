# Reproduction of https://github.com/faustomorales/keras-ocr/issues/244
# Our rewrite of the notebook cells posted in the report (names ours, same calls and loop): one
# Pipeline, then recognize() on each of ~58000 images fed one at a time, with a JSON dump every 1000.
import json
from time import time

import cv2
import keras_ocr
import pandas as pd

image_df = pd.read_csv('images.csv')
output_path = 'backups/'
pipeline = keras_ocr.pipeline.Pipeline()

t0 = time()
word_counts = []
words_per_image = []

for k, name in enumerate(image_df.image_name):
    if k % 500 == 0:
        print(time() - t0, k)
    image = cv2.imread('images/' + name, cv2.IMREAD_COLOR)
    image_rgb = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    prediction_groups = pipeline.recognize([image_rgb])
    word_counts.append(len(prediction_groups[0]))
    words_per_image.append([pair[0] for pair in prediction_groups[0]])
    if k == 999:
        with open(output_path + 'kerasocr_1000.json', 'w') as handle:
            json.dump({'word_counts': word_counts, 'words': words_per_image}, handle)
