#!/usr/bin/env python3
"""Fit the question side of late interaction (`assistant/retrieval/late_interaction.py`) and export it as int8 ONNX.

MaxSim compares the question's word pieces with each candidate's. The candidates' pieces come from
the shipped MiniLM (`minilm-int8.onnx`); this trains a copy of MiniLM used for the question's pieces
only, so a question in the asker's words ("cards", "the prompt phase") lands nearer the pieces of the
paper that answers it. Nothing about the candidates changes: their pieces, their cache and the index
stay as they are.

Training data: each answerable calibration question (the calibration half of `realistic.jsonl`,
`realistic-dev`, `-dev2`, `-dev3`, `-dev4`; never the test half or `-dev5`) with the 20 candidates
its search re-ranks (`scripts/ranker_candidates.jsonl.gz`, from `fit_ranker.py --collect`), each
candidate entry as the word pieces of its first three chunks by the shipped encoder. Loss: softmax
over the candidates' MaxSim at temperature 0.02, the gold entries pooled; AdamW at 2e-5 with
warm-up, 2 epochs, 16 questions a step, seed 0; about three minutes a model on 2 cores (611
questions). Only what is asked changes: the entries and the candidates the search finds are the
same.

`--hold-out SET` leaves one calibration set out; `fit_ranker.py --collect --question-pieces DIR`
scores each set with the model fitted without it, so the learned order is fitted on MaxSim values
as new questions will get them. Leave-one-set-out, MaxSim alone on each held-out set's candidates
(R@1 / R@5 / MRR@10): see the README (Evaluation).

    pip install -c requirements.lock -e '.[export]'     # torch and sentence-transformers
    export ASSISTANT_HOME=.assistant-mlsys ASSISTANT_KNOWLEDGE=knowledge/mlsys
    python scripts/train_question_pieces.py                       # -> assistant/index/encoder_files/
    python scripts/train_question_pieces.py --hold-out realistic-dev --out folds/realistic-dev.onnx
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import export_encoder  # noqa: E402
import fit_ranker  # noqa: E402

from assistant.retrieval.late_interaction import CHUNKS_PER_ENTRY  # noqa: E402  # of each candidate entry, as the re-ranker reads it

GRAPH = "minilm-question-int8.onnx"
SETTING = "question-pieces"  # its key in encoders.json
EPOCHS, LEARNING_RATE, TEMPERATURE, BATCH, SEED = 2, 2e-5, 0.02, 16, 0


def candidate_pieces(rows: list[dict]) -> dict[str, list[Any]]:
    """Each candidate entry's first chunks as word-piece matrices of the shipped encoder."""
    from assistant import Assistant, Settings

    bot = Assistant(Settings.from_env())
    index, encoder = bot.retriever.index, bot.retriever.index.embedder
    wanted = sorted({c.entry_id for row in rows for c in row["candidates"]})
    texts = {e: [c.text for c in index.chunks_of(e)[:CHUNKS_PER_ENTRY]] for e in wanted}
    flat = [t for e in wanted for t in texts[e]]
    matrices = iter(encoder.token_vectors(flat))  # type: ignore[attr-defined]
    return {e: [next(matrices) for _ in texts[e]] for e in wanted}


def question_texts() -> dict[str, str]:
    from assistant.eval.questions import load_questions

    return {
        q.id: q.question
        for name, split in fit_ranker.CALIBRATION
        for q in load_questions(fit_ranker.QUESTIONS / name, split)
    }


def train(rows: list[dict], pieces: dict[str, list[Any]], questions: dict[str, str]) -> Any:
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(SEED)
    random.seed(SEED)
    packed = []
    for row in rows:
        gold = [c.entry_id in row["gold"] for c in row["candidates"]]
        if not any(gold):
            continue  # nothing to learn from a search that missed
        matrices, owner = [], []
        for n, c in enumerate(row["candidates"]):
            matrices += pieces[c.entry_id]
            owner += [n] * len(pieces[c.entry_id])
        columns = torch.tensor(np.repeat(np.arange(len(matrices)), [len(m) for m in matrices]))
        stacked = torch.tensor(np.concatenate(matrices).astype(np.float32))
        packed.append((questions[row["id"]], stacked, columns, torch.tensor(owner), torch.tensor(gold)))
    model = SentenceTransformer(str(export_encoder.weights_dir()), device="cpu")
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01)
    steps = EPOCHS * -(-len(packed) // BATCH)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / max(1, steps // 10), (steps - s) / steps)
    )
    model.train()
    for _ in range(EPOCHS):
        random.shuffle(packed)
        for start in range(0, len(packed), BATCH):
            batch = packed[start : start + BATCH]
            loss = sum(
                torch.logsumexp(s, 0) - torch.logsumexp(s[gold], 0)
                for s, gold in ((maxsim(model, *item[:4]) / TEMPERATURE, item[4]) for item in batch)
            ) / len(batch)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
    return model.eval()


def maxsim(model: Any, question: str, stacked: Any, columns: Any, owner: Any) -> Any:
    """Each candidate entry's MaxSim: its best text's mean over question pieces of their best cosine."""
    import torch

    features = model.tokenize([question])
    hidden = model(features)["token_embeddings"][0]
    n = int(features["attention_mask"][0].sum())
    rows = torch.nn.functional.normalize(hidden[1 : n - 1] if n > 2 else hidden[:n], dim=-1)
    cosines = rows @ stacked.T
    texts = int(columns.max()) + 1
    per_text = torch.full((len(rows), texts), -2.0).scatter_reduce(1, columns.expand(len(rows), -1), cosines, "amax")
    return torch.full((int(owner.max()) + 1,), -2.0).scatter_reduce(0, owner, per_text.mean(0), "amax")


def export(model: Any, target: Path, questions: list[str]) -> dict[str, Any]:
    """int8 ONNX like the shipped encoder; its cosine to the trained model's pieces on calibration questions."""
    import numpy as np

    from assistant.index.onnx_encoder import OnnxEncoder

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model.save(str(work / "model"))
        export_encoder.export_fp32(work / "model", work / "fp32.onnx")
        export_encoder.quantise(work / "fp32.onnx", target, work)
    ours = OnnxEncoder(graph=target)
    cosines = []
    for text in questions[:200]:
        reference = model.encode(text, output_value="token_embeddings")[1:-1].numpy()
        reference /= np.linalg.norm(reference, axis=1, keepdims=True)
        cosines.extend((ours.token_vectors([text])[0] * reference).sum(axis=1).tolist())
    return {
        "pieces": len(cosines),
        "min_cosine_to_torch": round(min(cosines), 4),
        "mean_cosine_to_torch": round(float(np.mean(cosines)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hold-out", choices=[n.removesuffix(".jsonl") for n, _ in fit_ranker.CALIBRATION])
    parser.add_argument(
        "--out", type=Path, help="where the graph goes (default: the shipped one, recorded in encoders.json)"
    )
    args = parser.parse_args()
    from assistant.offline import offline_environment

    offline_environment()
    rows = [r for r in fit_ranker.load() if r["candidates"] and r["set"] != args.hold_out]
    questions = question_texts()
    model = train(rows, candidate_pieces(rows), questions)
    target = args.out or export_encoder.OUT / GRAPH
    target.parent.mkdir(parents=True, exist_ok=True)
    check = export(model, target, list(questions.values()))
    print(f"{len(rows)} questions -> {target}: {check}")
    if args.out is None:
        record(target, len(rows), check)


def record(target: Path, questions: int, check: dict[str, Any]) -> None:
    path = export_encoder.OUT / "encoders.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    sha = hashlib.sha256(target.read_bytes()).hexdigest()
    data[SETTING] = {
        "name": f"onnx-int8:all-MiniLM-L6-v2-question-pieces@{sha[:12]}",
        "files": [GRAPH],
        "candidates_encoder": data["local"]["name"],  # the word pieces it was fitted against
        "sha256": sha,
        "source": export_encoder.source(),
        "trained": {
            "on": [name for name, _ in fit_ranker.CALIBRATION],
            "questions": questions,
            "loss": f"softmax over the 20 candidates' MaxSim at temperature {TEMPERATURE}",
            "epochs": EPOCHS,
            "learning_rate": LEARNING_RATE,
            "batch": BATCH,
            "seed": SEED,
        },
        "check": check,
    }
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
