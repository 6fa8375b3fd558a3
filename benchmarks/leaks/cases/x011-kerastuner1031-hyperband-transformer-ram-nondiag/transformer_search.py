# Reproduction of https://github.com/keras-team/keras-tuner/issues/1031 (December 2024):
# a Hyperband search over a transformer encoder for sequences keeps raising RAM between
# trials on a ~500 GB HPC node until the program or the node crashes.
# Minimal rewrite of the posted build_model (same tuned hyperparameters and ranges), names
# ours; the encoder block, the data and the search settings are ours.
import keras
import keras_tuner
import numpy as np
from keras import layers

SEQ_LEN, N_FEATURES = 128, 16
x_train = np.random.rand(5000, SEQ_LEN, N_FEATURES).astype("float32")
y_train = np.random.rand(5000, 1).astype("float32")


def encoder_block(x, head_size, num_heads, ff_dim, dropout):
    attn = layers.MultiHeadAttention(key_dim=head_size, num_heads=num_heads, dropout=dropout)(x, x)
    x = layers.LayerNormalization(epsilon=1e-6)(x + attn)
    ff = layers.Dense(ff_dim, activation="relu")(x)
    ff = layers.Dense(x.shape[-1])(layers.Dropout(dropout)(ff))
    return layers.LayerNormalization(epsilon=1e-6)(x + ff)


class TransformerHyperModel(keras_tuner.HyperModel):
    def build(self, hp):
        num_blocks = hp.Int("num_transformer_blocks", min_value=2, max_value=8, step=2)
        head_size = hp.Int("head_size", min_value=32, max_value=128, step=32)
        num_heads = hp.Int("num_heads", min_value=2, max_value=8, step=2)
        ff_dim = hp.Int("ff_dim", min_value=64, max_value=256, step=64)
        learning_rate = hp.Float("learning_rate", min_value=1e-4, max_value=1e-2, sampling="LOG")
        dropout = hp.Float("dropout_rate", min_value=0.1, max_value=0.5, step=0.1)

        inputs = keras.Input(shape=(SEQ_LEN, N_FEATURES))
        x = inputs
        for _ in range(num_blocks):
            x = encoder_block(x, head_size, num_heads, ff_dim, dropout)
        x = layers.GlobalAveragePooling1D()(x)
        outputs = layers.Dense(1)(x)
        model = keras.Model(inputs, outputs)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss="mse")
        return model


if __name__ == "__main__":
    tuner = keras_tuner.Hyperband(TransformerHyperModel(), objective="val_loss", max_epochs=30,
                                  directory="tuning", project_name="transformer")
    tuner.search(x_train, y_train, validation_split=0.2)
