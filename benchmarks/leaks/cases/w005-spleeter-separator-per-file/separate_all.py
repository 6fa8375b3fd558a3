# Reproduction (our own minimal rewrite) of the loop posted in
# https://github.com/deezer/spleeter/issues/414 (Spleeter 1.x on TensorFlow 1.x, June 2020).
# A new Separator is constructed for every audio file; memory grows file after file
# until the process is killed.
import glob

from spleeter.separator import Separator


def split_stems(track_path):
    separator = Separator("spleeter:2stems")
    separator.separate_to_file(track_path, "stems_out")


for track_path in sorted(glob.glob("tracks/*.mp3")):
    split_stems(track_path)
