# Reproduction of https://github.com/backstopmedia/tensorflowbook/issues/28
# (minimal rewrite of write_records_file from "Chapter 5 - 05 CNN Implementation.ipynb"; names ours, comments dropped).
# Reported: memory of the graph nodes is never reclaimed; the notebook process grows until it cannot write all images.
import tensorflow as tf

sess = tf.InteractiveSession()


def write_records_file(dataset, record_location):
    writer = None
    current_index = 0
    for breed, filenames in dataset.items():
        for filename in filenames:
            if current_index % 100 == 0:
                if writer:
                    writer.close()
                record_filename = "{}-{}.tfrecords".format(record_location, current_index)
                writer = tf.python_io.TFRecordWriter(record_filename)
            current_index += 1

            image_file = tf.read_file(filename)
            try:
                image = tf.image.decode_jpeg(image_file)
            except Exception:
                print(filename)
                continue

            grayscale = tf.image.rgb_to_grayscale(image)
            resized = tf.image.resize_images(grayscale, 250, 151)
            image_bytes = sess.run(tf.cast(resized, tf.uint8)).tobytes()
            label = breed.encode("utf-8")

            example = tf.train.Example(features=tf.train.Features(feature={
                "label": tf.train.Feature(bytes_list=tf.train.BytesList(value=[label])),
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image_bytes])),
            }))
            writer.write(example.SerializeToString())
    writer.close()


write_records_file(testing_dataset, "./output/testing-images/testing-image")
write_records_file(training_dataset, "./output/training-images/training-image")
