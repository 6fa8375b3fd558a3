# Reproduction (our own minimal rewrite) of the code posted in
# https://github.com/see--/natural-question-answering/issues/7 (TF 2.1/2.2, CPU)
# Each question/context pair is tokenized to its own length and fed to a hub.load()ed BERT.
import tensorflow as tf
import tensorflow_hub as hub
from transformers import BertTokenizer

tokenizer = BertTokenizer.from_pretrained("tokenizer_tf2_qa")
qa_model = hub.load("https://tfhub.dev/see--/bert-uncased-tf2-qa/1")


def answer_all(pairs):
    for question, context in pairs:
        enc = tokenizer.encode_plus(question, context, add_special_tokens=True)
        word_ids = enc["input_ids"]
        mask = enc["attention_mask"]
        type_ids = enc["token_type_ids"]
        word_ids, mask, type_ids = map(
            lambda t: tf.expand_dims(tf.convert_to_tensor(t, dtype=tf.int32), 0),
            (word_ids, mask, type_ids),
        )
        outputs = qa_model([word_ids, mask, type_ids])
