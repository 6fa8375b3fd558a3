# Reproduction (our own minimal rewrite) of the loop posted in
# https://github.com/tensorflow/tensorflow/issues/14185 (TF 1.x graph mode, 2017):
# every image read with OpenCV is passed to tf.image.encode_jpeg inside the loop; memory grows
# with each call until a 256 GB server runs out. Image list and output handling are ours.
import glob

import cv2
import tensorflow as tf

image_list = sorted(glob.glob("/data/raw_images/*.png"))

encoded = []
with tf.Session() as sess:
    for imagefile in image_list:
        im = cv2.imread(imagefile)
        image_data = tf.image.encode_jpeg(im, format="rgb")
        encoded.append(sess.run(image_data))
