# Reproduction of https://github.com/keras-team/keras/issues/12786 (Keras 2.2.4, TF 1.13, Colab):
# a small MLP wrapped in KerasClassifier and scored with sklearn's cross_val_score over a
# RepeatedStratifiedKFold; each fold's fit takes longer than the last, mostly in compile and
# the first epoch. Minimal rewrite of the posted script (the Pima Indians diabetes MLP),
# names ours; the data file is replaced by random data of the same shape.
import numpy
from keras.layers import Dense
from keras.models import Sequential
from keras.wrappers.scikit_learn import KerasClassifier
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score


def create_model():
    model = Sequential()
    model.add(Dense(12, input_dim=8, activation="relu"))
    model.add(Dense(8, activation="relu"))
    model.add(Dense(1, activation="sigmoid"))
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    return model


numpy.random.seed(7)
features = numpy.random.rand(768, 8)
labels = (numpy.random.rand(768) > 0.65).astype(int)

classifier = KerasClassifier(build_fn=create_model, epochs=150, batch_size=10, verbose=0)
folds = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=7)
scores = cross_val_score(classifier, features, labels, cv=folds)
print(scores.mean())
