# Reproduction of https://github.com/optuna/optuna/issues/1178
# (minimal rewrite of the posted script, names ours; the dataset sizes and trial count are ours
# where the excerpt ends).
# Reported: RSS grows by about 1 GB per trial while Optuna tunes a tf.keras network, until the
# 16 GB machine runs out of memory after ~15 trials; the small model below shows the growth too.
import optuna
import tensorflow as tf
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

features, labels = make_classification(n_samples=100000, n_features=100)
features = MinMaxScaler().fit_transform(features)
x_train, x_test, y_train, y_test = train_test_split(features, labels)


def objective(trial):
    model = tf.keras.models.Sequential()
    model.add(tf.keras.layers.InputLayer(input_shape=(100,)))
    model.add(tf.keras.layers.Dense(trial.suggest_int("dense_1", 16, 512), activation="relu"))
    model.add(tf.keras.layers.Dense(trial.suggest_int("dense_2", 16, 512), activation="relu"))
    model.add(tf.keras.layers.Dense(1, activation="sigmoid"))
    model.compile(optimizer=trial.suggest_categorical("optimizer", ["adam", "sgd"]),
                  loss="binary_crossentropy")
    callbacks = [
        tf.keras.callbacks.EarlyStopping(patience=1),
        tf.keras.callbacks.TensorBoard(log_dir="logs"),
        tf.keras.callbacks.ReduceLROnPlateau(),
    ]
    model.fit(x_train, y_train, validation_split=0.2, epochs=10, batch_size=64, callbacks=callbacks)
    return model.evaluate(x_test, y_test)


if __name__ == "__main__":
    study = optuna.create_study()
    study.optimize(objective, n_trials=100)
