# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/google/tf-quant-finance/issues/68 (TF Quant Finance pricing notebook)
# A tf.function pricer called with a strikes vector whose length is the loop counter.
import numpy as np
import tensorflow as tf
import tf_quant_finance as tff
from tqdm import trange

dtype = np.float64
spot = 100.0
sigma = 0.2


@tf.function
def price_eu_options(strikes, spot, sigma):
    return tff.black_scholes.option_price(
        volatilities=sigma, strikes=strikes, expiries=1.0, spots=spot, dtype=dtype)


for i in trange(1, 100000):
    strikes = tf.constant(np.random.rand(i) * (0.5 * spot) + spot, dtype)
    price_eu_options(strikes, spot, sigma)
