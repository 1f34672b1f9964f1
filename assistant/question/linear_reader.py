"""The small learned readers' shared model: logistic regression over two views of a text.

The value reader (`value_kinds.py`), the intent reader (`intent_reader.py`) and the refusal reader
(`answer/refusal_reader.py`) each read the asking sentences the same way: their words and word pairs
(a fixed vocabulary, binary, L2-normalised) and their MiniLM vector (the readers' encoder of
`encoders.py`, whatever the index's embeddings), fitted by the same full-batch gradient descent. One
copy of that model keeps a refit of any of them comparable to the others.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.question.encoders import SHIPPED

if TYPE_CHECKING:
    from collections.abc import Sequence

    from assistant.question.encoders import SentenceEncoders

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


def design(texts: list[str], vocabulary: dict[str, int], vectors: np.ndarray) -> np.ndarray:
    """The model's input: both views side by side, one row per text (`vectors`: the texts' sentence vectors)."""
    words = np.stack([word_vector(t, vocabulary) for t in texts])
    return np.concatenate([words, vectors], axis=1)


Weights = tuple[dict[str, int], np.ndarray, np.ndarray]  # vocabulary (feature -> column), weights, bias


def read_one(model: Weights, text: str, encoders: SentenceEncoders, extra: Sequence[float] = ()) -> np.ndarray | None:
    """Each class's probability for one text (and `extra` columns); None when the encoders' vectors are not
    as wide as the ones the weights were fitted on: a reader fitted on MiniLM cannot read another
    encoder's vectors, and the patterns decide instead."""
    vocabulary, weights, bias = model
    vector = encoders.reader_vector(text)
    if len(vocabulary) + vector.shape[0] + len(extra) != weights.shape[0]:
        return None
    inputs = design([text], vocabulary, vector[None, :])
    if extra:
        inputs = np.concatenate([inputs, np.asarray([extra], np.float32)], axis=1)
    return probabilities(inputs, weights, bias)[0]


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
    encoders: SentenceEncoders = SHIPPED,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Vocabulary, weights and bias of a reader over `design`'s two views (and `extra` columns, one row
    per text, when given), fitted on (text, label) pairs: classes weighted to balance, full-batch
    gradient descent from zeros, so the same rows give the same weights. The value reader
    (`scripts/fit_value_reader.py`), the intent reader and the refusal reader are fitted by it."""
    counts = Counter(f for t in texts for f in set(features(t)))
    vocabulary = sorted(f for f, n in counts.items() if n >= MIN_COUNT)
    inputs = design(texts, {f: i for i, f in enumerate(vocabulary)}, encoders.reader_vectors(texts))
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


def load_weights(path: Path) -> Weights:
    """A fitted reader's vocabulary (feature -> column), weights and bias, as `fit_classes` wrote them."""
    with np.load(path) as data:
        vocabulary = {str(f): i for i, f in enumerate(data["vocabulary"])}
        return vocabulary, data["weights"].astype(np.float32), data["bias"].astype(np.float32)
