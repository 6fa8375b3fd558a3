"""The runtime verifier: each rule's claim measured under real TensorFlow (CONFIRMED or REFUTED).

Nothing here imports TensorFlow; only the measuring subprocesses (``_child.py``) do.
Entry point: ``tf_memlint.verify.command.run(argv)``.
"""
