# chop's LangGraph server image: the recipe `langgraph build -t chop .` generates from
# langgraph.json (compare: `langgraph dockerfile Dockerfile.generated`), written out readably,
# PLUS the production defaults below (CHOP_CHAT_PROVIDER/CHOP_EMBEDDING_PROVIDER=openai,
# CHOP_DATA_DIR, HF_HUB_OFFLINE), which the generated file does not have.
#
# NOT BUILT OR RUN HERE: the machine this was written on has no Docker engine. The recipe was
# checked only by `langgraph dockerfile` producing the same steps. See docs/deploy.md.
#
# The base image is LangChain's server (langgraph-api with its PostgreSQL + Redis runtime). At
# run time it needs POSTGRES_URI (or DATABASE_URI), REDIS_URI and a license/API key
# (LANGGRAPH_CLOUD_LICENSE_KEY, or LANGSMITH_API_KEY), plus chop's CHOP_* settings.
FROM langchain/langgraph-api:3.11

# The project (see .dockerignore: no .venv, no .chop data, no benchmark results).
ADD . /deps/main

# chop with its base dependencies only (no [local] extra: no torch, no llama.cpp, no weights).
# Models are reached over HTTP: CHOP_CHAT_PROVIDER=openai and CHOP_EMBEDDING_PROVIDER=openai.
RUN cd /deps/main && PYTHONDONTWRITEBYTECODE=1 \
    uv pip install --system --no-cache-dir -c /api/constraints.txt -e .

# The graphs, and the checkpointer factory (checkpoints in chop's own database,
# CHOP_DATABASE_URL). Run with -e LANGGRAPH_CHECKPOINTER= to use the server's built-in one.
# Named as installed modules, exactly as langgraph.json names them.
ENV LANGSERVE_GRAPHS='{"ingest": "deploy.graphs:ingest", "decide_cnm": "deploy.graphs:decide_cnm", "answer": "deploy.graphs:answer", "chat": "deploy.graphs:chat"}'
ENV LANGGRAPH_CHECKPOINTER='{"path": "deploy.checkpointer.postgres_checkpointer"}'
# Who may call (deploy/auth.py): set CHOP_API_KEYS at run time; without it the server answers
# only requests from inside the container, so every outside request is refused.
ENV LANGGRAPH_AUTH='{"path": "deploy.auth:auth"}'

# Production defaults: remote models, no embedded PostgreSQL (CHOP_DATABASE_URL must be set).
ENV CHOP_CHAT_PROVIDER=openai \
    CHOP_EMBEDDING_PROVIDER=openai \
    CHOP_DATA_DIR=/tmp/chop \
    HF_HUB_OFFLINE=1

# As generated: make sure project dependencies did not replace the server's own packages.
RUN mkdir -p /api/langgraph_api /api/langgraph_runtime /api/langgraph_license \
    && touch /api/langgraph_api/__init__.py /api/langgraph_runtime/__init__.py \
       /api/langgraph_license/__init__.py \
    && PYTHONDONTWRITEBYTECODE=1 uv pip install --system --no-cache-dir --no-deps -e /api

WORKDIR /deps/main
