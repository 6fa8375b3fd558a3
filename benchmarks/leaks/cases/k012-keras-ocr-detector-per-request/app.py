# Reproduction of https://github.com/faustomorales/keras-ocr/issues/80
# Our minimal rewrite of the posted Flask-RESTful service, not the reporter's code:
# names are ours; the calls and their placement (models built inside the per-request function) are kept.
import cv2
import keras_ocr
from flask import Flask, request
from flask_restful import Api, Resource

app = Flask(__name__)
api = Api(app)


def read_words(image_path):
    detector = keras_ocr.detection.Detector()
    recognizer = keras_ocr.recognition.Recognizer()
    image = cv2.imread(image_path)
    boxes = detector.detect([image])[0]
    found = recognizer.recognize_from_boxes(image=image, boxes=boxes)
    return [item[0] for item in found]


class ReadText(Resource):
    def post(self, path):
        words = read_words(request.form['path'])
        return ' '.join(words)


api.add_resource(ReadText, '/<string:path>')

if __name__ == '__main__':
    app.run(debug=True)
