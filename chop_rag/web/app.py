"""The page's own routes, mounted into the LangGraph server (``"http": {"app": ...}``).

Everything a conversation or an ingest does goes through the server's API (threads, runs,
streaming: the page calls it directly). These routes do only what that API has no call for:
serve the page, list collections and their documents with identity cards, delete a document,
take an uploaded file into its collection's folder, and hand back a stored PDF to link a page.

Every route answers JSON errors as ``{"error": "<one sentence>"}`` with a 4xx status. The
handlers are plain functions: Starlette runs them in its thread pool, so the database calls
never block the server's event loop. The app's middleware (chop_rag.web.origin) wraps the whole
server, LangGraph's routes included: without keys it answers only its own page on this machine.

The file and section routes hand back only documents of the collection whose files lie under
the folders a server run may read or the collection's uploads folder, checked on the file
opened (chop_rag.reading.allowed): a ``doc_id`` a caller stored through ``documents`` or a Send
cannot name /etc or a home folder's PDF.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import IO, Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from chop_rag.config import Context, validate_collection
from chop_rag.reading.allowed import (
    Folders,
    OutsideFolders,
    is_within,
    named_file,
    open_for_reading,
    reading_within,
    resolved,
    server_folders,
)
from chop_rag.web.origin import OwnPageOnly
from chop_rag.web.uploads import UploadRefused, store_upload, upload_folder

STATIC = Path(__file__).with_name("static")
PREFIX = "/chop"
Handler = Callable[[Request], Response | Awaitable[Response]]
MAX_UPLOAD_REQUEST_MB = 200  # a body past this is refused before it is read whole


class Refused(Exception):
    """A request the page made that cannot be done, with its status and one sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def settings() -> Context:
    return Context()


def collection_context(name: str) -> Context:
    try:
        validate_collection(name)
    except ValueError as err:
        raise Refused(400, str(err)) from None
    return settings().with_overrides(collection=name)


def existing(ctx: Context) -> Any:
    """The store, for a collection that exists (404 naming it otherwise)."""
    from chop_rag.store import store_for

    store = store_for(ctx)
    if not store.collection_exists(ctx.collection):
        raise Refused(
            404,
            f"collection {ctx.collection!r} does not exist (add documents to it first)",
        )
    return store


def page(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def to_page(request: Request) -> Response:
    return RedirectResponse(f"{PREFIX}/")


def page_settings(request: Request) -> Response:
    """What the page needs before the first call: default collection, collections, limits."""
    from chop_rag.questions.query import MAX_QUESTION_CHARS

    ctx = settings()
    return JSONResponse(
        {
            "collection": ctx.collection,
            "collections": collection_names(ctx),
            "max_question_chars": MAX_QUESTION_CHARS,
            "max_file_mb": ctx.max_file_mb,
        }
    )


def collection_names(ctx: Context) -> list[str]:
    from chop_rag.store import store_for

    return sorted({ctx.collection, *store_for(ctx).collection_names()})


def collections(request: Request) -> Response:
    return JSONResponse({"collections": collection_names(settings())})


def documents(request: Request) -> Response:
    """The collection's documents as ``chop docs`` lists them: title, chunk count, model and
    identity card (fields and its one-line summary)."""
    from chop_rag.labelling.profile import stored_profile
    from chop_rag.terminal.stored import card_summary

    ctx = collection_context(request.path_params["collection"])
    store = existing(ctx)
    rows = []
    for record in store.documents(ctx.collection).values():
        profile = stored_profile(record.metadata)
        card = dict(profile.get("identity") or {})
        path = Path(record.doc_id)
        rows.append(
            {
                "doc_id": record.doc_id,
                "title": record.title,
                "chunks": record.chunk_count,
                "model": profile.get("model") or "",
                "card": card,
                "summary": card_summary(card),
                "uploaded": path.parent == upload_folder(ctx.data_dir, ctx.collection),
                "pdf": path.suffix.lower() == ".pdf",
            }
        )
    rows.sort(key=lambda row: (row["title"].lower(), row["doc_id"]))
    return JSONResponse({"collection": ctx.collection, "documents": rows})


def delete_document(request: Request) -> Response:
    """Remove one document (chop delete), and its file when it was uploaded from the page, so
    that adding the folder again does not bring it back."""
    from chop_rag.api import ingest

    ctx = collection_context(request.path_params["collection"])
    doc_id = request.query_params.get("doc_id", "")
    store = existing(ctx)
    if doc_id not in store.documents(ctx.collection):
        raise Refused(404, f"no document {doc_id!r} in collection {ctx.collection!r}")
    report = ingest(delete=[doc_id], context=ctx)
    path = Path(doc_id)
    if path.parent == upload_folder(ctx.data_dir, ctx.collection):
        path.unlink(missing_ok=True)
    return JSONResponse({"deleted": report.get("deleted", 0), "doc_id": doc_id})


async def upload(request: Request) -> Response:
    """Write the request's body as ``?name=`` into the collection's folder; the page then runs
    the ingest graph on the path this returns. The body is counted as it arrives: past the
    file size limit the upload is refused without reading the rest (a chunked body declares
    no length)."""
    ctx = collection_context(request.path_params["collection"])
    limit_mb = ctx.max_file_mb if ctx.max_file_mb > 0 else MAX_UPLOAD_REQUEST_MB
    limit = min(limit_mb, MAX_UPLOAD_REQUEST_MB) * 1024 * 1024
    too_large = Refused(413, f"the file is larger than the limit of {limit // (1024 * 1024)} MB")
    try:
        declared = int(request.headers.get("content-length") or 0)
    except ValueError:
        raise Refused(400, "the request's Content-Length is not a number") from None
    if declared > limit:
        raise too_large
    received = bytearray()
    async for part in request.stream():
        received += part
        if len(received) > limit:
            raise too_large
    data = bytes(received)
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(_store, ctx, request.query_params.get("name", ""), data)


def _store(ctx: Context, name: str, data: bytes) -> Response:
    from chop_rag.store import store_for

    store = store_for(ctx)
    stored_ids = (
        list(store.documents(ctx.collection)) if store.collection_exists(ctx.collection) else []
    )
    try:
        stored = store_upload(
            upload_folder(ctx.data_dir, ctx.collection),
            name,
            data,
            max_file_mb=ctx.max_file_mb,
            stored=stored_ids,
        )
    except UploadRefused as err:
        raise Refused(400, str(err)) from None
    return JSONResponse({"path": str(stored.path), "unchanged": stored.unchanged})


def served_folders(ctx: Context) -> Folders:
    """Where the files the page hands back may lie: the folders a server run may read, and
    the collection's uploads."""
    return (*server_folders(), resolved(upload_folder(ctx.data_dir, ctx.collection)))


def served_document(ctx: Context, doc_id: str) -> Any:
    """The store, once the document is the collection's and its id names no file outside the
    served folders (404, one sentence, otherwise): the page hands back nothing a caller's id
    chose."""
    store = existing(ctx)
    if doc_id not in store.documents(ctx.collection):
        raise Refused(404, f"no document {doc_id!r} in collection {ctx.collection!r}")
    path = named_file(doc_id)
    if path is not None and not is_within(resolved(path), served_folders(ctx)):
        raise Refused(404, f"{doc_id!r} is not a file this server hands back")
    return store


def document_file(request: Request) -> Response:
    """A stored PDF, for a source card's link to its page (``#page=N``); only documents of
    the collection, only PDFs under the served folders (checked on the file opened): never any
    other file the server can read."""
    ctx = collection_context(request.path_params["collection"])
    doc_id = request.query_params.get("doc_id", "")
    served_document(ctx, doc_id)
    path = Path(doc_id)
    not_served = Refused(404, f"{path.name} is not a PDF on this server")
    if path.suffix.lower() != ".pdf":
        raise not_served
    try:
        with reading_within(served_folders(ctx)):
            handle = open_for_reading(path)
    except (OSError, OutsideFolders):
        raise not_served from None
    if b"%PDF" not in handle.read(1024):  # as the PDF loader reads one
        handle.close()
        raise not_served
    handle.seek(0)
    size = str(os.fstat(handle.fileno()).st_size)
    return StreamingResponse(
        blocks(handle),
        media_type="application/pdf",
        headers={"Content-Disposition": "inline", "Content-Length": size},
    )


def blocks(handle: IO[bytes]) -> Iterator[bytes]:
    """The open file's bytes in blocks, closed at the end (the file checked is the one sent)."""
    with handle:
        while block := handle.read(1 << 16):
            yield block


SECTION_WINDOW = (
    6  # chunks on either side, as the answer reads a section (chop_rag/answers/sections.py)
)


def section(request: Request) -> Response:
    """The whole section around a source's chunk (its neighbours under the same heading path,
    as the answer reads it), the overlap between adjacent chunks said once: a card shows the
    quoted sentences inside it."""
    ctx = collection_context(request.path_params["collection"])
    doc_id = request.query_params.get("doc_id", "")
    try:
        index = int(request.query_params.get("chunk_index", ""))
    except ValueError:
        raise Refused(400, "chunk_index must be a whole number") from None
    store = served_document(ctx, doc_id)
    around = store.neighbours(
        ctx.collection, doc_id, index - SECTION_WINDOW, index + SECTION_WINDOW
    )
    at = next((i for i, hit in enumerate(around) if hit.chunk_index == index), None)
    if at is None:
        raise Refused(404, f"no chunk {index} of {doc_id!r} in collection {ctx.collection!r}")
    path = around[at].metadata.get("headings") or []
    first = last = at
    while path and first > 0 and (around[first - 1].metadata.get("headings") or []) == path:
        first -= 1
    while (
        path
        and last + 1 < len(around)
        and (around[last + 1].metadata.get("headings") or []) == path
    ):
        last += 1
    text, end = "", 0
    for hit in around[first : last + 1]:
        overlap = end - hit.char_start if text else 0
        if 0 < overlap <= len(hit.text) and text.endswith(hit.text[:overlap]):
            text += hit.text[overlap:]  # the words two adjacent chunks share, once
        else:
            text += ("\n" if text else "") + hit.text
        end = hit.char_end
    return JSONResponse({"text": text, "chunks": last - first + 1})


def error_response(exc: Exception) -> Response:
    """A refusal, or anything else (the database down, say), as one sentence."""
    import psycopg

    if isinstance(exc, Refused):
        return JSONResponse({"error": str(exc)}, status_code=exc.status)
    if isinstance(exc, psycopg.OperationalError):
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return JSONResponse({"error": f"cannot reach the database: {first}"}, status_code=503)
    if isinstance(exc, ValueError):
        return JSONResponse({"error": str(exc)}, status_code=400)
    return JSONResponse({"error": f"the server failed: {type(exc).__name__}: {exc}"}, 500)


def answered(handler: Handler) -> Handler:
    """``handler`` with its failures answered as JSON (the LangGraph server's own exception
    handlers stay as they are for its routes)."""

    if inspect.iscoroutinefunction(handler):

        async def run_async(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                return error_response(exc)

        return run_async

    def run(request: Request) -> Response:
        try:
            return handler(request)  # type: ignore[return-value]
        except Exception as exc:
            return error_response(exc)

    return run


COLLECTION = PREFIX + "/api/collections/{collection}"
routes = [
    Route(PREFIX, to_page),
    Route(PREFIX + "/", page),
    Route(PREFIX + "/api/settings", answered(page_settings)),
    Route(PREFIX + "/api/collections", answered(collections)),
    Route(COLLECTION + "/documents", answered(documents), methods=["GET"]),
    Route(COLLECTION + "/documents", answered(delete_document), methods=["DELETE"]),
    Route(COLLECTION + "/uploads", answered(upload), methods=["POST"]),
    Route(COLLECTION + "/file", answered(document_file), methods=["GET"]),
    Route(COLLECTION + "/section", answered(section), methods=["GET"]),
    Mount(PREFIX + "/static", StaticFiles(directory=STATIC), name="static"),
]

app = Starlette(routes=routes, middleware=[Middleware(OwnPageOnly)])
