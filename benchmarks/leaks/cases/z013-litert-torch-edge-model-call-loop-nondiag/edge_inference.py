# Reproduction (our own minimal rewrite) of the situation in
# https://github.com/google-ai-edge/litert-torch/issues/518 (ai-edge-torch nightly,
# tensorflow 2.17): a PyTorch model converted to a TFLite model with ai_edge_torch is
# evaluated on a dataset, one image per call, and the process grows to ~180 GB after
# ~30,000 inferences. The model and the images are stand-ins of ours.
import ai_edge_torch
import numpy as np
import torch
import torchvision


def convert_classifier():
    model = torchvision.models.mobilenet_v3_small(num_classes=10).eval()
    sample_inputs = (torch.randn(1, 3, 224, 224),)
    return ai_edge_torch.convert(model, sample_inputs)


def evaluate(edge_model, num_images=30000):
    correct = 0
    for _ in range(num_images):
        image = np.random.rand(1, 3, 224, 224).astype(np.float32)
        label = np.random.randint(10)
        edge_output = edge_model(image)
        correct += int(np.argmax(edge_output) == label)
    return correct / num_images


if __name__ == "__main__":
    evaluate(convert_classifier())
