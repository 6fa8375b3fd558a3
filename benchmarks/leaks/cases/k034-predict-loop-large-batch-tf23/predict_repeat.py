# Reproduction of https://github.com/tensorflow/tensorflow/issues/44711 (Stack Overflow question 64199384)
# Our minimal rewrite of the posted script, not the reporter's code: the layer stack is ours; the
# 64 x 512 x 512 x 12 input and the 60 repeated predict calls in a loop are kept.
import numpy as np
from tensorflow.keras.layers import Conv2D, Input
from tensorflow.keras.models import Model

matrix_side = 512
images_in = Input(shape=(matrix_side, matrix_side, 12))
features = Conv2D(12, 3, padding='same', activation='relu')(images_in)
model = Model(inputs=images_in, outputs=features)

batch = np.zeros((64, matrix_side, matrix_side, 12))

for i in range(60):
    out = model.predict(batch)
    print(i, out.shape)
