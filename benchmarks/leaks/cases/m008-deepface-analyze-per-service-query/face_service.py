# Reproduction (our own minimal rewrite) of the service in
# https://github.com/serengil/deepface/issues/78 (deepface on TF 2.x Keras): the reporter loads
# the analysis models once at startup, yet RAM grows with every analyse query
# (6 GB after loading, 8.51 GB after one query, 8.55 GB after the next). Route and payload are ours.
from deepface import DeepFace
from flask import Flask, jsonify, request

app = Flask(__name__)

models = {
    "emotion": DeepFace.build_model("Emotion"),
    "age": DeepFace.build_model("Age"),
    "gender": DeepFace.build_model("Gender"),
    "race": DeepFace.build_model("Race"),
}


@app.route("/analyze", methods=["POST"])
def analyze():
    img_path = request.json["img_path"]
    result = DeepFace.analyze(img_path, actions=["emotion", "age", "gender", "race"], models=models)
    return jsonify(result)


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
