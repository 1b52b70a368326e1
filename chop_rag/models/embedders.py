"""What chop needs from an embedder and a tokenizer, and the embedders it runs in-process.

chop_rag.models.construction builds them (the one module that constructs models); this module holds
how each one computes: MiniLM on torch (bfloat16 where the CPU has it), MiniLM int8 on ONNX Runtime,
GGUF embedders on llama.cpp, and any LangChain ``Embeddings``.
"""

from __future__ import annotations

import copy
import os
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import numpy as np
from langchain_core.embeddings import Embeddings

from chop_rag.config import env_setting
from chop_rag.models.weights import ONNX_INPUTS, ModelUnavailable

NOMIC_BATCH_TOKENS = 512  # longer texts are cut here (chunks are ~200 tokens plus the prefix)
MINILM_MAX_TOKENS = 256  # what all-MiniLM-L6-v2 reads (sentence-transformers cuts there too)


class Tokenizer(Protocol):
    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of every token of ``text``, in order."""
        ...


class Embedder(Protocol):
    """What ingestion and retrieval need from an embedding model."""

    name: str
    dimension: int
    tokenizer: Tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Questions as the embedder wants them: one trained with task prefixes (nomic) embeds a
    question unlike a passage (``embed_queries``); the others embed both alike (``embed``)."""
    queries = getattr(embedder, "embed_queries", None)
    return queries(texts) if queries is not None else embedder.embed(texts)


def embedder_prefixes(embedder: Embedder) -> dict[str, str]:
    """The task prefixes the embedder puts before questions and passages ({} when none); a
    collection records them beside the embedder's name."""
    return dict(getattr(embedder, "prefixes", None) or {})


# ------------------------------------------------------------------ tokenizers
class HuggingFaceTokenizer:
    """Exact token spans from the embedder's own (fast) tokenizer, read from a copy of it.

    A Rust tokenizer used from two threads at once fails ("Already borrowed"). Sharing the
    model's tokenizer meant taking the embedder's lock, so chunking a document waited for whole
    embedding batches of others (fin dev: split busy 231 s for 49 CPU s, and counted in embed's
    busy time); a copy with its own lock lets one document be split while another embeds.
    """

    def __init__(self, tokenizer: object) -> None:
        self._tokenizer = copy.deepcopy(tokenizer)
        self._lock = threading.Lock()

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        with self._lock:
            encoded = self._tokenizer(  # type: ignore[operator]
                text, add_special_tokens=False, return_offsets_mapping=True, truncation=False
            )
        return [(int(s), int(e)) for s, e in encoded["offset_mapping"]]


class ApproximateTokenizer:
    """Word pieces (~1.3 per English word) for remote embedders whose tokenizer is not here."""

    _piece = re.compile(r"\w{1,6}|[^\w\s]")

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in self._piece.finditer(text)]


# ------------------------------------------------------------------- embedders
def bf16_matmuls_native() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AVX512-BF16 or AMX), where oneDNN
    runs a transformer's matrix products at about twice the float32 rate."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # pragma: no cover - builds without oneDNN
        return False


FLOAT32_TOLERANCE = 1e-5
BFLOAT16_TOLERANCE = 2e-3


def embeds_in_float32() -> bool:
    """CHOP_EMBED_FLOAT32=true: MiniLM in float32 throughout, even where bfloat16 is native."""
    return bool(env_setting("CHOP_EMBED_FLOAT32"))


def minilm_in_bfloat16() -> bool:
    """Whether the local MiniLM computes in bfloat16: natively on this CPU, unless
    CHOP_EMBED_FLOAT32=1."""
    return not embeds_in_float32() and bf16_matmuls_native()


def minilm_tolerance() -> float:
    """How far two vectors of one text from the local MiniLM may differ, per dimension: in
    bfloat16 the batch a text is embedded with changes its rounding (seen: up to 6e-4), in
    float32 only the last bits."""
    return BFLOAT16_TOLERANCE if minilm_in_bfloat16() else FLOAT32_TOLERANCE


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another local sentence-transformers folder), normalised vectors.

    On a CPU with native bfloat16 the matrix products run in bfloat16 under autocast (layer
    norms, softmax and pooling stay float32): 2.3x the float32 rate here, and every vector
    within cosine 0.9999 of the float32 one (bench/results/embed-runtimes), so a collection
    made either way reads with the other; ``CHOP_EMBED_FLOAT32=1`` keeps float32 throughout.
    """

    def __init__(self, model_dir: Path, name: str, *, bfloat16: bool = True) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()  # chunking tokenizes whole documents
        transformers_logging.disable_progress_bar()

        self.name = name
        self._model = SentenceTransformer(str(model_dir), device="cpu")
        self.dimension = int(self._model.get_embedding_dimension() or 0)
        self._lock = threading.Lock()
        self.tokenizer: Tokenizer = HuggingFaceTokenizer(self._model.tokenizer)
        self.bfloat16 = bfloat16 and bf16_matmuls_native()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with (
            self._lock,
            gil_handed_back_often(),
            torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bfloat16),
        ):
            vectors = self._model.encode(
                list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)


EMBEDDING_SWITCH_INTERVAL_S = 0.0005


@contextmanager
def gil_handed_back_often() -> Iterator[None]:
    """While torch embeds, Python threads hand the GIL over every 0.5 ms instead of 5 ms.

    torch releases the GIL inside each operation but needs it back between them; an ingest's
    other threads run Python (the graph's tasks, chunk decisions), and each may keep the GIL
    for the whole switch interval. With one such thread, MiniLM embedded 32 chunks/s here at
    5 ms and 62 at 0.5 ms; with three, 9 and 26 (alone: 174-189; bench.studies.gil_contention).
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, EMBEDDING_SWITCH_INTERVAL_S))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


class OnnxEmbedder:
    """all-MiniLM-L6-v2 with int8 weights in ONNX Runtime: the same tokenizer, mean pooling
    and normalisation as sentence-transformers."""

    def __init__(self, onnx_file: Path, model_dir: Path, name: str, threads: int) -> None:
        import onnxruntime
        from transformers import AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()  # chunking tokenizes whole documents
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.name = name
        self._session = onnxruntime.InferenceSession(
            str(onnx_file), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self._lock = threading.Lock()
        self.tokenizer: Tokenizer = HuggingFaceTokenizer(self._tokenizer)
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One text per run: int8 activations are scaled per run, so a text embedded beside
        others would get another vector; alone it always gets the same one, with no padding
        (as fast as batches of 4-16 here)."""
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return vectors
        with self._lock:
            encoded = self._tokenizer(
                list(texts), truncation=True, max_length=MINILM_MAX_TOKENS, return_tensors=None
            )
            for row in range(len(texts)):
                feed = {
                    name: np.asarray([encoded[name][row]], dtype=np.int64) for name in ONNX_INPUTS
                }
                vectors[row] = self._session.run(None, feed)[0][0].mean(axis=0)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


class LlamaEmbedder:
    """A GGUF embedding model in-process through llama.cpp (nomic-embed-text-v1.5): mean
    pooling, normalised vectors, and the model's task prefixes on questions and passages.

    Its vocabulary is bert-base-uncased's, token for token the one MiniLM ships, so chunks are
    sized by that (exact, with character offsets) and are the same chunks under either
    embedder. llama.cpp contexts are not thread-safe: one call at a time.
    """

    def __init__(
        self,
        gguf: Path,
        name: str,
        prefixes: dict[str, str],
        tokenizer_dir: Path,
        threads: int,
    ) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ModelUnavailable(
                f"the {name} embedder needs llama-cpp-python (pip install 'chop-rag[local]')"
            ) from exc
        from transformers import AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()  # chunking tokenizes whole documents
        self.name = name
        self.prefixes = dict(prefixes)
        self._lock = threading.Lock()
        self._model = llama_cpp.Llama(
            model_path=str(gguf),
            embedding=True,
            pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
            n_ctx=NOMIC_BATCH_TOKENS,
            n_batch=NOMIC_BATCH_TOKENS,
            n_ubatch=NOMIC_BATCH_TOKENS,  # a non-causal model reads a sequence in one ubatch
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
        self.dimension = int(self._model.n_embd())
        self.tokenizer: Tokenizer = HuggingFaceTokenizer(
            AutoTokenizer.from_pretrained(str(tokenizer_dir))
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passages (chunks, section titles), with the document prefix."""
        return self._embed(self.prefixes["document"], texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions, with the query prefix."""
        return self._embed(self.prefixes["query"], texts)

    def _embed(self, prefix: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            rows = self._model.embed([prefix + text for text in texts], truncate=True)
        vectors = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


class LangChainEmbedder:
    """Any LangChain ``Embeddings`` (OpenAIEmbeddings against a base URL, in production)."""

    def __init__(self, embeddings: Embeddings, name: str, tokenizer: Tokenizer | None = None):
        self.name = name
        self._embeddings = embeddings
        self.tokenizer = tokenizer or ApproximateTokenizer()
        self.dimension = len(embeddings.embed_query("dimension probe"))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(self._embeddings.embed_documents(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)
