# Reproduction of https://github.com/keras-team/keras/issues/6511
# Our minimal rewrite of the posted loop (Keras 1.2, TensorFlow 0.12 backend, CPU), names ours:
# the same HDF5 model is loaded 300 times and K.clear_session() is called after each load.
import keras.backend as K
import keras.models

for attempt in range(300):
    try:
        network = keras.models.load_model('saved_network.hdf5')
        K.clear_session()
    except Exception as error:
        print(error)
        break
