"""Text: the words of identifiers and questions, and the sentence encoder.

Retrieval, the few-shot pools and the spatial function knowledge all read
text the same way (``words``, ``split_identifier``) and embed it with the same
encoder (``get_encoder``); neither belongs to any one of them.
"""
