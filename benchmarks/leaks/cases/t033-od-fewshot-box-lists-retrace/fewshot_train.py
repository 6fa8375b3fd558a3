# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/tensorflow/models/issues/10059 (eager few-shot detection fine-tuning, TF 2.x)
# Each batch passes Python lists of per-image box tensors whose box counts differ.
import random

import tensorflow as tf

tf.keras.backend.set_learning_phase(True)

batch_size = 16
learning_rate = 0.01
num_batches = 108


def pick_fine_tune_vars(detection_model):
    prefixes = [
        "WeightSharedConvolutionalBoxPredictor/WeightSharedConvolutionalBoxHead",
        "WeightSharedConvolutionalBoxPredictor/WeightSharedConvolutionalClassHead"]
    return [v for v in detection_model.trainable_variables
            if any(v.name.startswith(p) for p in prefixes)]


def get_model_train_step_function(model, optimizer, vars_to_fine_tune):
    @tf.function(experimental_relax_shapes=True)
    def train_step_fn(image_tensors, groundtruth_boxes_list, groundtruth_classes_list):
        shapes = tf.constant(batch_size * [[640, 640, 3]], dtype=tf.int32)
        model.provide_groundtruth(
            groundtruth_boxes_list=groundtruth_boxes_list,
            groundtruth_classes_list=groundtruth_classes_list)
        with tf.GradientTape() as tape:
            preprocessed = tf.concat(
                [model.preprocess(image_tensor)[0] for image_tensor in image_tensors], axis=0)
            prediction_dict = model.predict(preprocessed, shapes)
            losses_dict = model.loss(prediction_dict, shapes)
            total_loss = losses_dict["Loss/localization_loss"] + losses_dict["Loss/classification_loss"]
            gradients = tape.gradient(total_loss, vars_to_fine_tune)
            optimizer.apply_gradients(zip(gradients, vars_to_fine_tune))
        return total_loss

    return train_step_fn


def fine_tune(detection_model, train_images_np, gt_box_tensors, gt_classes_one_hot_tensors):
    optimizer = tf.keras.optimizers.SGD(learning_rate=learning_rate, momentum=0.9)
    train_step_fn = get_model_train_step_function(
        detection_model, optimizer, pick_fine_tune_vars(detection_model))
    for idx in range(num_batches):
        all_keys = list(range(len(train_images_np)))
        random.shuffle(all_keys)
        example_keys = all_keys[:batch_size]
        gt_boxes_list = [gt_box_tensors[key] for key in example_keys]
        gt_classes_list = [gt_classes_one_hot_tensors[key] for key in example_keys]
        image_tensors = [tf.convert_to_tensor(train_images_np[key][None], tf.float32) for key in example_keys]
        total_loss = train_step_fn(image_tensors, gt_boxes_list, gt_classes_list)
        if idx % 10 == 0:
            print("batch", idx, "of", num_batches, "loss", total_loss.numpy())
