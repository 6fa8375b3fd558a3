# Reproduction of https://github.com/keras-team/keras-cv/issues/1161
# Our minimal rewrite of the posted snippet, names ours: the StableDiffusion pipeline is
# constructed inside the loop (once per image size) and text_to_image is run on each; the
# plotting helper is kept in shape, the prompt is ours.
import keras_cv
import matplotlib.pyplot as plt


def show_images(images):
    plt.figure(figsize=(20, 20))
    for index in range(len(images)):
        plt.subplot(1, len(images), index + 1)
        plt.imshow(images[index])
        plt.axis("off")
    plt.show()


for step in range(2):
    pipeline = keras_cv.models.StableDiffusion(img_width=512 // (step + 1), img_height=512 // (step + 1))
    images = pipeline.text_to_image("a watercolor painting of a lighthouse at dusk", batch_size=2)
    show_images(images)
