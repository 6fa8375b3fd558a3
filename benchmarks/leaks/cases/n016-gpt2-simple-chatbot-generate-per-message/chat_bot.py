# Reproduction (our own minimal rewrite) of the usage described in
# https://github.com/minimaxir/gpt-2-simple/issues/130 (gpt-2-simple, TF 1.x): a chat bot
# answers every incoming message with gpt2.generate on one loaded session; each call builds
# a new sampling graph on top of the existing one, so memory and latency grow per message.
# The message source and the reply formatting are ours.
import gpt_2_simple as gpt2


def incoming_messages():
    while True:
        message = input("> ")
        if not message:
            return
        yield message


def reply_to(session, message):
    replies = gpt2.generate(session, run_name="chatbot", prefix=message, length=60,
                            temperature=0.7, nsamples=1, batch_size=1,
                            return_as_list=True, include_prefix=False)
    return replies[0].split("\n")[0]


if __name__ == "__main__":
    session = gpt2.start_tf_sess()
    gpt2.load_gpt2(session, run_name="chatbot")
    for message in incoming_messages():
        print(reply_to(session, message))
