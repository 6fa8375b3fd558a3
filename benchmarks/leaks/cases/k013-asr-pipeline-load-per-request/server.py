# Reproduction of https://github.com/rolczynski/Automatic-Speech-Recognition/issues/26
# Our minimal rewrite of the Flask route posted in the thread, not the reporter's code:
# names are ours; the calls (asr.load and pipeline.predict inside the POST handler) are kept.
import automatic_speech_recognition as asr
from flask import Flask, request

app = Flask(__name__)
UPLOAD_PATH = '/tmp/upload.wav'


@app.route('/test', methods=['POST'])
def transcribe():
    upload = request.files['audio']
    upload.save(UPLOAD_PATH)
    sample = asr.utils.read_audio(UPLOAD_PATH)
    pipeline = asr.load('deepspeech2', lang='en')
    sentences = pipeline.predict([sample])
    return sentences[0]


if __name__ == '__main__':
    app.run()
