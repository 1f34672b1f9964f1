"""What a question asks for, read by a small learned model instead of a longer list of phrasings.

The intent patterns (`intents.py`) were each extended when a new question set showed a new phrasing,
and the next set showed others: left out of the set it is measured on, they read 0.74 of the ~950
labelled answerable questions of the realistic sets as labelled, and 0.61 of realistic-dev5's.
This reader is multinomial logistic regression over the same two views as the value reader
(`value_kinds.py`): the asking sentences' words and word pairs, and their MiniLM vector. Fitted on
the calibration sets (the calibration half of realistic.jsonl, realistic-dev to -dev4), it is
measured on realistic-dev5, -dev6 and the test half, which it never saw (docs/retrieval-stages.md).

Alone it reads 0.859 / 0.930 / 0.756 of those three sets' questions as labelled (the patterns 0.609 /
0.750 / 0.683). `intents.intent_of` answers by it only where the patterns fall to their default
(`problem`) and it is sure the question asks for papers: in place of every default reading (never for
names), it read 0.688 / 0.828 / 0.720, but the answers composed from it were no better (test half
answered with gold 0.927 -> 0.902); docs/retrieval-stages.md has the figures.

Refit with `python -m assistant.question.intent_reader` (the same files give the same weights).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path

import numpy as np

from assistant.question.encoders import SHIPPED, SentenceEncoders
from assistant.question.linear_reader import fit_classes, load_weights, read_one

WEIGHTS = Path(__file__).resolve().parent / "intent_reader.npz"
INTENTS = ("name", "compare", "papers", "caveat", "example", "number", "how", "definition", "problem")
TRAINING = (("realistic.jsonl", "calibration"), *((f"realistic-dev{n}.jsonl", None) for n in ("", 2, 3, 4)))

_lock = threading.Lock()
_loaded: tuple[dict[str, int], np.ndarray, np.ndarray] | None = None


def _model() -> tuple[dict[str, int], np.ndarray, np.ndarray] | None:
    """The shipped weights, loaded once; None when the file is missing (the patterns decide)."""
    global _loaded
    with _lock:
        if _loaded is None and WEIGHTS.exists():
            _loaded = load_weights(WEIGHTS)
        return _loaded


@lru_cache(maxsize=2048)
def read(asking: str, encoders: SentenceEncoders = SHIPPED) -> tuple[str, float]:
    """The most likely intent of the asking sentences (as `intents.intent_of` reads them) and its
    probability; ("", 0.0) when no weights are shipped or they cannot read the encoders' vectors."""
    model = _model()
    row = None if model is None else read_one(model, asking, encoders)
    if row is None:
        return "", 0.0
    best = int(row.argmax())
    return INTENTS[best], float(row[best])


def fit(rows: list[tuple[str, str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Vocabulary, weights and bias fitted on (asking sentences, intent) pairs, as the value reader is."""
    return fit_classes([text for text, _ in rows], [intent for _, intent in rows], INTENTS)


def training_rows(folder: Path) -> list[tuple[str, str]]:
    """The answerable questions of the calibration sets with an intent, as (asking sentences, intent)."""
    import json

    from assistant.question.intents import asked_sentences

    rows = []
    for name, split in TRAINING:
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            wanted = record.get("type") not in (None, "refuse") and record.get("intent") in INTENTS
            if wanted and (split is None or record.get("split") == split):
                rows.append((asked_sentences(record["question"]), record["intent"]))
    return rows


def main() -> None:
    from assistant.offline import offline_environment

    offline_environment()
    rows = training_rows(Path("knowledge/questions"))
    vocabulary, weights, bias = fit(rows)
    np.savez_compressed(
        WEIGHTS, vocabulary=np.array(vocabulary), weights=weights.astype(np.float16), bias=bias.astype(np.float32)
    )
    print(f"{len(rows)} questions, {len(vocabulary)} words and pairs -> {WEIGHTS.name}")


if __name__ == "__main__":
    main()
