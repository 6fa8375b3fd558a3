# Reproduction (our own minimal rewrite) of the code described in
# https://github.com/keras-team/keras/issues/9011 (Keras 2.1, TensorFlow 1.x backend):
# a text recognizer decodes every batch with K.get_value(K.ctc_decode(...)) inside a large
# loop; memory and time per batch keep growing. The CRNN and the sizes are ours.
import numpy as np
from keras import backend as K
from keras.layers import Dense, Input, Reshape
from keras.models import Model

image_height, image_width, class_count = 32, 128, 37


def get_model():
    image = Input(shape=(image_height, image_width))
    columns = Reshape((image_width, image_height))(image)
    probabilities = Dense(class_count, activation="softmax")(columns)
    return Model(image, probabilities)


def recognize_all(basemodel, batches):
    texts = []
    for images in batches:
        y_pred = basemodel.predict(images)
        input_length = np.ones(y_pred.shape[0]) * y_pred.shape[1]
        out = K.get_value(K.ctc_decode(y_pred, input_length=input_length)[0][0])[:, :]
        texts.append(out)
    return texts


if __name__ == "__main__":
    basemodel = get_model()
    batches = (np.random.rand(16, image_height, image_width) for _ in range(10000))
    print(len(recognize_all(basemodel, batches)))
