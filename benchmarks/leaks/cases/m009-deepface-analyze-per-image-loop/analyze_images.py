# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/serengil/deepface/issues/50 (deepface, TF 2.x, CPU only): repeated calls to
# DeepFace.analyze keep occupying memory even after each analysis completes, ending in
# ResourceExhaustedError (OOM). The reporter posted no code; the image list is ours.
import glob

from deepface import DeepFace

image_paths = sorted(glob.glob("images/*.jpg"))

results = []
for img_path in image_paths:
    demography = DeepFace.analyze(img_path)
    results.append(demography)
