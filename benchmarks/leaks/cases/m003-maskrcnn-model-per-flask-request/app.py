# Reproduction (our own minimal rewrite) of the Flask app in
# https://github.com/matterport/Mask_RCNN/issues/2716: every POST builds a Mask R-CNN model
# and loads its weights before detecting; the reporter asks how to do this once at startup.
# The visualisation code the reporter redacted is left out here too.
import base64

import cv2
import numpy as np
from flask import Flask, jsonify, request

from configuration import create_model

app = Flask(__name__)


@app.route("/", methods=["GET", "POST"])
def index():
    if request.method == "POST":
        imagefile = request.files["image"].read()
        jpg_as_np = np.frombuffer(imagefile, dtype=np.uint8)
        img = cv2.imdecode(jpg_as_np, flags=1)

        model = create_model()

        image = img[..., ::-1]
        r = model.detect([image], verbose=0)[0]

        masked_image = img.copy()
        string = base64.b64encode(cv2.imencode(".jpg", masked_image)[1]).decode()
        return jsonify({"count": str(r["masks"].shape[2]), "image": string})
    return jsonify({})


if __name__ == "__main__":
    app.run()
