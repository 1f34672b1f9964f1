"""What kind of value does a question ask for? A small learned reader beside refusal's patterns.

Refusal stops questions that ask for a value the knowledge never holds: a price, a date, a person,
a company, a count, a product spec, install steps or an opinion (`refusal.py`). Patterns read
the phrasings they were written for and miss the next one: on a question set written afresh in
four voices (`realistic-dev3.jsonl`), they found the kind of 21 of its 32 such questions ("what
does a BlueField-3 go for", "who came up with Raft", "the exact helm values") and read a price
into four answerable ones ("a noisy pricing task", "the invoice went from $2k to $11k").

This reader is multinomial logistic regression over two views of the sentences that ask: their
words and word pairs (a fixed vocabulary, binary, L2-normalised) and their MiniLM vector (the
shipped ONNX encoder, whatever the index's embeddings). It was fitted by
`scripts/fit_value_reader.py` on 520 questions written to teach it (`knowledge/questions/
value-kinds.jsonl`: twelve per kind in many voices, and hard negatives that mention money,
dates or memory in passing) and on the calibration questions; the fresh set and the test half
stayed out. `refusal.asked_kind` trusts it when it is sure (`SURE`) and keeps the patterns'
reading otherwise, so a phrasing the patterns know still counts when the reader hesitates.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).resolve().parent / "value_reader.npz"
KINDS = ("none", "price", "date", "person", "company", "count", "spec", "howto", "opinion")
SURE = 0.8  # a kind the reader gives this probability overrides the patterns (calibration, cross-validated)
SURELY_NONE = 0.9  # ... and "none" at this probability overrules a kind the patterns read
WORD = re.compile(r"[a-z0-9$]+(?:['.\-][a-z0-9]+)*")

_lock = threading.Lock()


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


MIN_COUNT = 2  # a word or pair seen once in training is noise
L2, EPOCHS, STEP = 1e-4, 1500, 4.0


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


class ValueReader:
    """The fitted weights; `read` is pure, so one instance serves every thread."""

    def __init__(self, path: Path = WEIGHTS) -> None:
        self.vocabulary, self.weights, self.bias = load_weights(path)

    def read(self, text: str) -> dict[str, float]:
        """Each kind's probability for the asking sentences `text`."""
        row = probabilities(design([text], self.vocabulary), self.weights, self.bias)[0]
        return dict(zip(KINDS, (float(p) for p in row), strict=True))


_loaded: ValueReader | None = None


def _reader() -> ValueReader:
    """The shipped reader, loaded once on first use (a 60 KB file; the encoder loads lazily too)."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = ValueReader()
        return _loaded


@lru_cache(maxsize=2048)
def read(text: str) -> tuple[str, float]:
    """The most likely kind for the asking sentences `text` and its probability."""
    scores = _reader().read(text)
    kind = max(scores, key=scores.__getitem__)
    return kind, scores[kind]
