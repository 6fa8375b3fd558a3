# Reproduction (our own minimal rewrite) of the usage described in
# https://github.com/serengil/deepface/issues/141 (deepface 0.0.4x, TF 2.x): an API that calls
# DeepFace.analyze() for race and gender once per request; each call leaks about 1.3 GB until
# the server restarts. Route and names are ours.
from deepface import DeepFace
from flask import Flask, jsonify, request

app = Flask(__name__)


@app.route("/analyze", methods=["POST"])
def analyze():
    image_path = request.json["image_path"]
    result = DeepFace.analyze(img_path=image_path, actions=["race", "gender"])
    return jsonify({"race": result["dominant_race"], "gender": result["gender"]})


if __name__ == "__main__":
    app.run(port=5000)
