# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/serengil/retinaface/issues/118 (retinaface 0.0.17, TensorFlow 2.16):
# the same image is run through RetinaFace.detect_faces four times; resident memory rises
# after every call, although the model is built once and is not trainable.
from retinaface import RetinaFace

image_url = "https://example.com/group-photo.jpg"

faces = RetinaFace.detect_faces(image_url)
faces = RetinaFace.detect_faces(image_url)
faces = RetinaFace.detect_faces(image_url)
faces = RetinaFace.detect_faces(image_url)
print(len(faces))
