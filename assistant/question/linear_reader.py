"""The small learned readers' shared model: logistic regression over two views of a text.

The value reader (`value_kinds.py`), the intent reader (`intent_reader.py`) and the refusal reader
(`answer/refusal_reader.py`) each read the asking sentences the same way: their words and word pairs
(a fixed vocabulary, binary, L2-normalised) and their MiniLM vector (the shipped ONNX encoder,
whatever the index's embeddings), fitted by the same full-batch gradient descent. One copy of that
model keeps a refit of any of them comparable to the others.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import numpy as np

WORD = re.compile(r"[a-z0-9$]+(?:['.\-][a-z0-9]+)*")
MIN_COUNT = 2  # a word or pair seen once in training is noise
L2, EPOCHS, STEP = 1e-4, 1500, 4.0


def features(text: str) -> list[str]:
    """Words and adjacent word pairs of a lower-cased text."""
    tokens = WORD.findall(text.lower())
    return tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]


def word_vector(text: str, vocabulary: dict[str, int]) -> np.ndarray:
    vector = np.zeros(len(vocabulary), np.float32)
    for feature in features(text):
        index = vocabulary.get(feature)
        if index is not None:
            vector[index] = 1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def sentence_vectors(texts: list[str]) -> np.ndarray:
    from assistant.index.embeddings import make_embedder

    return np.asarray(make_embedder("local").embed_documents(texts), np.float32)


def design(texts: list[str], vocabulary: dict[str, int]) -> np.ndarray:
    """The model's input: both views side by side, one row per text."""
    words = np.stack([word_vector(t, vocabulary) for t in texts])
    return np.concatenate([words, sentence_vectors(texts)], axis=1)


def probabilities(inputs: np.ndarray, weights: np.ndarray, bias: np.ndarray) -> np.ndarray:
    logits = inputs @ weights + bias
    logits -= logits.max(axis=1, keepdims=True)
    exp = np.exp(logits)
    return exp / exp.sum(axis=1, keepdims=True)


def fit_classes(
    texts: list[str],
    labels: list[str],
    classes: tuple[str, ...],
    extra: np.ndarray | None = None,
    l2: float = L2,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Vocabulary, weights and bias of a reader over `design`'s two views (and `extra` columns, one row
    per text, when given), fitted on (text, label) pairs: classes weighted to balance, full-batch
    gradient descent from zeros, so the same rows give the same weights. The value reader
    (`scripts/fit_value_reader.py`), the intent reader and the refusal reader are fitted by it."""
    counts = Counter(f for t in texts for f in set(features(t)))
    vocabulary = sorted(f for f, n in counts.items() if n >= MIN_COUNT)
    inputs = design(texts, {f: i for i, f in enumerate(vocabulary)})
    if extra is not None:
        inputs = np.concatenate([inputs, extra.astype(np.float32)], axis=1)
    indices = np.array([classes.index(label) for label in labels])
    targets = np.eye(len(classes), dtype=np.float32)[indices]
    per_class = np.bincount(indices, minlength=len(classes)).astype(np.float32)
    sample = (len(indices) / (len(classes) * np.maximum(per_class, 1)))[indices][:, None]
    sample = (sample / sample.mean()).astype(np.float32)
    weights = np.zeros((inputs.shape[1], len(classes)), np.float32)
    bias = np.zeros(len(classes), np.float32)
    for _ in range(EPOCHS):
        gradient = (probabilities(inputs, weights, bias) - targets) * sample / len(indices)
        weights -= STEP * (inputs.T @ gradient + l2 * weights)
        bias -= STEP * gradient.sum(axis=0)
    return vocabulary, weights, bias


def load_weights(path: Path) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """A fitted reader's vocabulary (feature -> column), weights and bias, as `fit_classes` wrote them."""
    with np.load(path) as data:
        vocabulary = {str(f): i for i, f in enumerate(data["vocabulary"])}
        return vocabulary, data["weights"].astype(np.float32), data["bias"].astype(np.float32)
