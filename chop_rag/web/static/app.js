// chop's page. Conversations and ingests go through the LangGraph server's own API (threads,
// runs, streaming); /chop/api/* (chop_rag/web/app.py) lists documents, deletes, takes uploads.
// No framework: a few functions per view. Text from the server is only ever set as text.
"use strict";

const API = "/chop/api";
const $ = (id) => document.getElementById(id);
const state = {
  collection: "",
  maxQuestion: 4000,
  threadId: null,
  threadCollection: null,
  seenAnswer: null,
  turns: 0,           // questions sent from this page (numbers each answer, never reset)   // id of the last answer message taken from the thread
  answers: [],        // {question, text, sources, citations, notes}
  shown: null,        // the answer whose sources the Sources view shows
  documents: new Map(),  // doc_id -> the documents route's row (for identity cards)
  busy: false,
};

// ---- small helpers ----------------------------------------------------------------------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

// The current collection's routes (its name is checked by the server; encoded all the same).
const here = () => `${API}/collections/${encodeURIComponent(state.collection)}`;
const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

function notify(message) {
  const box = $("notice");
  box.textContent = message || "";
  box.hidden = !message;
}

// The server's error as one sentence: {"error": ...} from chop's routes, {"detail": ...} or
// {"message": ...} from the LangGraph API.
async function errorText(response) {
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  const said = body && (body.error || body.message || body.detail);
  return typeof said === "string" ? said : `the server answered ${response.status} ${response.statusText}`;
}

// A server with CHOP_API_KEYS answers 401 until the page sends one of its keys: the page asks
// for it once and keeps it for this tab only (sessionStorage), sent as x-api-key.
const KEY_SLOT = "chop-api-key";

function withKey(options = {}) {
  const key = sessionStorage.getItem(KEY_SLOT);
  return key ? {...options, headers: {...(options.headers || {}), "x-api-key": key}} : options;
}

// fetch with the key; on a 401, ask for a key and try once more.
async function keyed(path, options = {}) {
  let response;
  try {
    response = await fetch(path, withKey(options));
    if (response.status === 401) {
      const key = window.prompt(`${await errorText(response)}\n\nAPI key:`);
      if (key) {
        sessionStorage.setItem(KEY_SLOT, key.trim());
        response = await fetch(path, withKey(options));
      }
    }
  } catch {
    throw new Error("cannot reach the chop server: is it still running?");
  }
  return response;
}

async function call(path, options = {}) {
  const response = await keyed(path, options);
  if (!response.ok) throw new Error(await errorText(response));
  return response.status === 204 ? null : response.json();
}

const postJson = (path, body) => call(path, {
  method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
});

// POST a run and hand each server-sent event ({event, data}) to onEvent as it arrives.
async function streamRun(path, body, onEvent) {
  const response = await keyed(path, {
    method: "POST",
    headers: {"Content-Type": "application/json", "Accept": "text/event-stream"},
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(await errorText(response));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), {stream: !done});
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      let event = "message";
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      let parsed;
      try { parsed = JSON.parse(data.join("\n")); } catch { parsed = data.join("\n"); }
      onEvent(event.split("|")[0], parsed);
    }
    if (done) return;
  }
}

function runError(data) {
  const said = data && (data.message || data.error);
  return typeof said === "string" ? said : "the run failed";
}

// ---- views ------------------------------------------------------------------------------

const TABS = ["ask", "sources", "documents"];

function show(view) {
  for (const name of TABS) {
    const selected = name === view;
    const tab = $(`tab-${name}`);
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    $(`view-${name}`).hidden = !selected;
  }
  if (view === "documents") loadDocuments();
  if (location.hash !== `#${view}`) history.replaceState(null, "", `#${view}`);
}

function setUpTabs() {
  TABS.forEach((name, index) => {
    const tab = $(`tab-${name}`);
    tab.addEventListener("click", () => show(name));
    tab.addEventListener("keydown", (event) => {
      const step = {ArrowRight: 1, ArrowLeft: -1}[event.key];
      if (!step) return;
      const next = TABS[(index + step + TABS.length) % TABS.length];
      show(next);
      $(`tab-${next}`).focus();
    });
  });
}

// ---- collections ------------------------------------------------------------------------

function fillCollections(names) {
  const list = $("collections");
  list.replaceChildren(...names.map((name) => el("option", {value: name})));
}

function setCollection(name) {
  state.collection = name;
  $("collection").value = name;
  $("documents-collection").textContent = name;
  state.documents = new Map();
  if (!$("view-documents").hidden) loadDocuments();
}

function collectionChosen() {
  const name = $("collection").value.trim();
  if (!name || name === state.collection) return;
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) {
    notify(`collection name '${name}' must be lowercase letters, digits and '_', starting with a letter, at most 40 characters`);
    $("collection").value = state.collection;
    return;
  }
  notify("");
  setCollection(name);
}

async function refreshCollections() {
  const {collections} = await call(`${API}/collections`);
  fillCollections(collections);
}

// ---- Ask --------------------------------------------------------------------------------

function newConversation() {
  state.threadId = null;
  state.seenAnswer = null;
  state.answers = [];
  state.shown = null;
  $("conversation").replaceChildren();
  renderSources();
  notify("");
  $("question").focus();
}

async function ask(event) {
  event.preventDefault();
  if (state.busy) return;
  const question = $("question").value;
  if (!question.trim()) {
    notify("Type a question first.");
    $("question").focus();
    return;
  }
  if (question.length > state.maxQuestion) {
    notify(`The question is ${question.length.toLocaleString("en")} characters long; ask in at most ${state.maxQuestion.toLocaleString("en")}.`);
    return;
  }
  notify("");
  if (state.threadId && state.threadCollection !== state.collection) newConversation();
  const conversation = $("conversation");
  conversation.append(el("li", {class: "message user"},
    el("p", {class: "who", text: "You"}), el("p", {class: "text", text: question})));
  const answer = {question, text: "", status: "Reading the question…", sources: [], citations: [], notes: []};
  state.turns += 1;
  document.body.dataset.turns = state.turns;
  const item = el("li", {class: "message assistant pending", "aria-busy": "true", "data-turn": state.turns},
    el("p", {class: "who", text: "chop"}), el("p", {class: "text"}));
  conversation.append(item);
  item.scrollIntoView({block: "nearest"});
  $("question").value = "";
  setBusy(true);
  try {
    if (!state.threadId) {
      const thread = await postJson("/threads", {metadata: {collection: state.collection, page: "chop"}});
      state.threadId = thread.thread_id;
      state.threadCollection = state.collection;
    }
    let failure = null;
    await streamRun(`/threads/${state.threadId}/runs/stream`, {
      assistant_id: "chat",
      input: {messages: [{role: "user", content: question}]},
      context: {collection: state.collection},
      stream_mode: ["messages-tuple", "updates", "values"],
    }, (kind, data) => {
      if (kind === "messages") {
        // the reply node writes the answer sentence by sentence, before the run's last values
        const [message, meta] = Array.isArray(data) ? data : [data, {}];
        if (meta && meta.langgraph_node === "reply" && message && message.type !== "human") {
          takeChunk(answer, message);
          renderAnswer(item, answer);
        }
      } else if (kind === "updates") {
        takeUpdate(answer, data);
        renderAnswer(item, answer);
      } else if (kind === "values") {
        const last = lastAnswer(data);
        if (last && last.id !== state.seenAnswer) takeAnswer(answer, last);
        renderAnswer(item, answer);
      } else if (kind === "error") {
        failure = runError(data);
      }
    });
    if (failure) answer.notes.push({error: true, text: failure});
    else if (!answer.text) answer.notes.push({error: true, text: "chop gave no answer (the run ended without one)"});
  } catch (error) {
    answer.notes.push({error: true, text: error.message});
  } finally {
    setBusy(false);
    item.classList.remove("pending");
    item.removeAttribute("aria-busy");
    state.answers.push(answer);
    renderAnswer(item, answer);
    if (answer.sources.length) { state.shown = answer; renderSources(); }
    $("question").focus();
  }
}

function setBusy(busy) {
  state.busy = busy;
  $("ask-button").disabled = busy;
  $("ask-button").textContent = busy ? "Answering…" : "Ask";
}

// What the run found so far, from each node's update as it finishes: the continuity decision,
// the sources (shown at once), whether the answer declines.
function takeUpdate(answer, update) {
  for (const [node, found] of Object.entries(update || {})) {
    if (!found || typeof found !== "object") continue;
    if (found.continuity && !answer.text) answer.status = "Searching the documents…";
    if (Array.isArray(found.sources)) {
      answer.sources = found.sources;
      const titles = [...new Set(found.sources.map((s) => s.doc_title))].slice(0, 3).join(", ");
      const count = found.sources.length;
      if (!answer.text) {
        answer.status = count ? `Found ${plural(count, "source")} (${titles}); writing the answer…` : "No source found…";
      }
    }
    if (node === "generate" || Array.isArray(found.citations)) {
      if (Array.isArray(found.citations)) answer.citations = found.citations;
      if (found.answerable === false && !answer.text) answer.status = "The sources do not answer it; saying why…";
    }
  }
}

// One chunk of the answer as it is written (a complete message replaces what was written).
function takeChunk(answer, message) {
  const text = textOf(message.content);
  if (answer.writing !== message.id || !String(message.type || "").includes("Chunk")) {
    answer.writing = message.id;
    answer.text = "";
  }
  answer.text += text;
  answer.status = "";
  const chop = message.additional_kwargs && message.additional_kwargs.chop;
  if (chop) takeMeta(answer, chop);
}

function textOf(content) {
  return typeof content === "string" ? content
    : (content || []).map((part) => (part && part.type === "text" && part.text) || "").join("");
}

function lastAnswer(values) {
  const messages = (values && values.messages) || [];
  const last = messages[messages.length - 1];
  return last && (last.type === "ai" || last.type === "AIMessage") ? last : null;
}

function takeAnswer(answer, message) {
  state.seenAnswer = message.id;  // the thread's earlier answers are not this turn's
  answer.text = textOf(message.content);
  answer.writing = message.id;
  takeMeta(answer, (message.additional_kwargs && message.additional_kwargs.chop) || {});
  answer.status = "";
}

function takeMeta(answer, chop) {
  answer.sources = chop.sources || [];
  answer.citations = chop.citations || [];
  answer.notes = notesOf(chop);
}

// Why the page says what it says: a declined answer, a follow-up on another document, an LLM
// that failed (the answer then quotes the sources only).
function notesOf(chop) {
  const notes = [];
  const continuity = chop.continuity || {};
  const said = (chop.notes || []).filter(Boolean);
  if (continuity.decision === "switch" || continuity.decision === "switch_same_question") {
    notes.push({text: `This question switched documents (${continuity.reason || "it names another one"}).`});
  } else if (continuity.decision === "continue") {
    notes.push({text: `Follow-up on the same document (${continuity.reason || "it names no other one"}).`});
  }
  if (continuity.question && continuity.decision && continuity.decision !== "first") {
    notes.push({text: `Asked as: “${continuity.question}”`});
  }
  if (chop.error) {
    notes.push({error: true, text: `The language model is unavailable (${String(chop.error).replace(/[.\s]+$/, "")}); the answer only quotes the sources.`});
  } else if (chop.declined) {
    notes.push({text: `chop declined to answer: ${said.join("; ") || "the stored documents do not say"}.`});
  }
  return notes;
}

function renderAnswer(item, answer) {
  item.querySelector(".text").replaceChildren(...withMarkers(answer, answer.text || answer.status || ""));
  item.querySelectorAll(".note, .cited").forEach((node) => node.remove());
  for (const note of answer.notes) {
    item.append(el("p", {class: note.error ? "note error" : "note", role: note.error ? "alert" : null, text: note.text}));
  }
  if (answer.sources.length) {
    const cited = answer.sources.filter((s) => answer.citations.includes(s.number));
    const titles = [...new Set(cited.map((s) => s.doc_title))].join(", ");
    item.append(el("p", {class: "cited"},
      cited.length ? `Cited: ${titles}` : "No source cited.",
      el("button", {type: "button", onclick: () => { state.shown = answer; renderSources(); show("sources"); }},
        `Show ${answer.sources.length} source${answer.sources.length === 1 ? "" : "s"}`)));
  }
}

// The answer's text with each [n] marker of a source it has as a button to that source's card.
function withMarkers(answer, text) {
  const sources = new Map(answer.sources.map((s) => [s.number, s]));
  return text.split(/(\[\d+\])/).filter(Boolean).map((part) => {
    const source = sources.get(Number((part.match(/^\[(\d+)\]$/) || [])[1]));
    if (!source) return document.createTextNode(part);
    return el("button", {type: "button", class: "marker", "aria-label": `Source ${source.number}: ${source.doc_title}`,
      onclick: () => { state.shown = answer; renderSources().then(() => showCard(source.number)); show("sources"); }}, part);
  });
}

function showCard(number) {
  const card = document.querySelector(`#source-cards .card[data-number="${number}"]`);
  if (card) { card.scrollIntoView({block: "nearest"}); card.focus(); }
}

// ---- Sources ----------------------------------------------------------------------------

async function renderSources() {
  const list = $("source-cards");
  const answer = state.shown;
  const count = answer ? answer.sources.length : 0;
  $("tab-sources").textContent = count ? `Sources (${count})` : "Sources";
  if (!answer) {
    list.replaceChildren();
    $("sources-for").textContent = "Ask a question first: the sources of its answer are shown here.";
    return;
  }
  $("sources-for").textContent = `For “${answer.question}”: cited sources first, quoted sentences highlighted.`;
  await documentCards();
  const cited = (s) => answer.citations.includes(s.number);
  const ordered = [...answer.sources].sort((a, b) => Number(cited(b)) - Number(cited(a)) || a.number - b.number);
  list.replaceChildren(...ordered.map((source) => sourceCard(source, cited(source), answer.text)));
  // each card's passage becomes its whole section, as the answer read it, once it is fetched
  for (const [index, source] of ordered.entries()) {
    const passage = list.children[index].querySelector(".passage");
    sectionText(source).then((text) => {
      if (!text || state.shown !== answer) return;
      passage.replaceChildren(...highlighted(text, answer.text));
      passage.dataset.section = "whole";
    });
  }
}

const sections = new Map();  // doc_id and chunk index -> the section's text (or "")

function sectionText(source) {
  const key = `${state.collection}\u0000${source.doc_id}\u0000${source.chunk_index}`;
  if (!sections.has(key)) {
    const query = `doc_id=${encodeURIComponent(source.doc_id)}&chunk_index=${source.chunk_index}`;
    sections.set(key, call(`${here()}/section?${query}`).then((r) => r.text, () => ""));
  }
  return sections.get(key);
}

async function documentCards() {
  if (state.documents.size) return;
  try {
    const {documents} = await call(`${here()}/documents`);
    state.documents = new Map(documents.map((d) => [d.doc_id, d]));
  } catch { /* cards then show what the source itself says */ }
}

function sourceCard(source, cited, answerText) {
  const meta = source.metadata || {};
  const known = state.documents.get(source.doc_id) || {};
  const identity = known.summary || source.model || known.model || "";
  const section = meta.heading || (meta.headings || []).join(" › ");
  const cnm = [source.model, source.category, (source.nouns || []).join(", ")].filter(Boolean).join(" · ");
  const pages = meta.pages || [];
  const link = String(source.doc_id).toLowerCase().endsWith(".pdf")
    ? el("a", {href: `${here()}/file?doc_id=${encodeURIComponent(source.doc_id)}${pages.length ? `#page=${pages[0]}` : ""}`, target: "_blank", rel: "noopener"},
        pages.length ? `Open the PDF at page ${pages[0]}` : "Open the PDF",
        pages.length > 1 ? ` (the passage runs to page ${pages[pages.length - 1]})` : "")
    : null;
  return el("li", {class: cited ? "card is-cited" : "card", "data-number": source.number, tabindex: "-1"},
    el("h3", {}, el("span", {class: "number", text: `[${source.number}]`}),
      el("span", {class: "title", text: source.doc_title}),
      cited ? el("span", {class: "hint", text: "cited"}) : null),
    identity ? el("p", {class: "identity", text: identity}) : null,
    section ? el("p", {class: "section"}, el("strong", {text: "Section: "}), section) : null,
    cnm ? el("p", {class: "section"}, el("strong", {text: "CNM: "}), cnm) : null,
    link ? el("p", {class: "section"}, link) : null,
    el("p", {class: "passage"}, ...highlighted(source.text || "", answerText)));
}

// The source's text with the sentences the answer quotes in <mark>: a sentence counts as
// quoted when its words (case and spacing aside) appear in the answer in the same order.
function highlighted(text, answerText) {
  const norm = (s) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  const answer = ` ${norm(answerText)} `;
  const parts = text.match(/[^.!?\n]+(?:[.!?]+|\n+|$)\s*/g) || [text];
  return parts.map((sentence) => {
    const words = norm(sentence);
    const quoted = words.split(" ").length >= 3 && answer.includes(` ${words} `);
    return quoted ? el("mark", {text: sentence}) : document.createTextNode(sentence);
  });
}

// ---- Documents --------------------------------------------------------------------------

let documentsAsked = 0;  // only the latest listing is shown

async function loadDocuments() {
  if (!state.collection) return;
  $("documents-collection").textContent = state.collection;
  const body = $("documents").tBodies[0];
  const asked = ++documentsAsked;
  let documents = [];
  try {
    ({documents} = await call(`${here()}/documents`));
  } catch (error) {
    if (asked !== documentsAsked) return;
    body.replaceChildren();
    $("documents-empty").hidden = false;
    $("documents-empty").textContent = error.message.includes("does not exist")
      ? `Collection '${state.collection}' has no documents yet: add files or a folder above.`
      : error.message;
    return;
  }
  if (asked !== documentsAsked) return;
  state.documents = new Map(documents.map((d) => [d.doc_id, d]));
  $("documents-empty").hidden = documents.length > 0;
  $("documents-empty").textContent = "No documents yet: add files or a folder above.";
  body.replaceChildren(...documents.map(documentRow));
}

const CARD_FIELDS = [["kind", "Kind"], ["entity", "Company"], ["model", "Model"], ["fiscal_year", "Fiscal year"],
  ["fiscal_quarter", "Quarter"], ["period_end", "Period end"], ["date", "Date"], ["edition", "Edition"]];

function documentRow(doc) {
  const card = doc.card || {};
  const fields = CARD_FIELDS.filter(([key]) => card[key] !== undefined && card[key] !== null && card[key] !== "")
    .flatMap(([key, label]) => [el("dt", {text: label}), el("dd", {text: String(card[key])})]);
  if (!fields.length && doc.model) fields.push(el("dt", {text: "Model"}), el("dd", {text: doc.model}));
  return el("tr", {"data-doc-id": doc.doc_id},
    el("td", {}, el("strong", {text: doc.title}), el("span", {class: "path", text: doc.doc_id})),
    el("td", {}, fields.length ? el("dl", {}, ...fields) : el("span", {class: "hint", text: "no identity card"})),
    el("td", {class: "chunks", text: String(doc.chunks)}),
    el("td", {}, el("button", {type: "button", "aria-label": `Delete ${doc.title}`, onclick: () => removeDocument(doc)}, "Delete")));
}

async function removeDocument(doc) {
  if (!window.confirm(`Delete “${doc.title}” from ${state.collection}?`)) return;
  try {
    await call(`${here()}/documents?doc_id=${encodeURIComponent(doc.doc_id)}`, {method: "DELETE"});
    await loadDocuments();
  } catch (error) {
    notify(error.message);
  }
}

async function uploadFiles(event) {
  event.preventDefault();
  const files = [...$("upload-files").files];
  if (!files.length) { notify("Choose one or more files first."); return; }
  const paths = [];
  const refused = [];
  for (const file of files) {
    try {
      const stored = await call(`${here()}/uploads?name=${encodeURIComponent(file.name)}`, {
        method: "POST", headers: {"Content-Type": "application/octet-stream"}, body: file,
      });
      paths.push(stored.path);
    } catch (error) {
      refused.push(error.message);
    }
  }
  notify(refused.join(" "));
  $("upload-files").value = "";
  if (paths.length) await runIngest(paths);
}

async function addFolder(event) {
  event.preventDefault();
  const folder = $("folder-path").value.trim();
  if (!folder) { notify("Type the folder's path on the server first."); return; }
  notify("");
  await runIngest([folder]);
}

// The ingest graph's run, streamed: its custom events drive the progress bar.
async function runIngest(paths) {
  const box = $("progress");
  const bar = $("progress-bar");
  const text = $("progress-text");
  const warnings = $("progress-warnings");
  const seen = {documents: 0, unchanged: 0, chunks: 0, labelled: 0, stored: 0, calls: 0, hits: 0};
  box.hidden = false;
  box.setAttribute("aria-busy", "true");
  bar.removeAttribute("value");
  warnings.replaceChildren();
  text.textContent = "Reading the files…";
  $("progress-title").textContent = "Adding documents…";
  const forms = document.querySelectorAll(".add button");
  forms.forEach((button) => { button.disabled = true; });
  const describe = () => `${seen.stored} of ${plural(seen.documents, "document")} stored` +
    (seen.unchanged ? ` (${seen.unchanged} unchanged)` : "") +
    `, ${seen.labelled} of ${plural(seen.chunks, "chunk")} labelled, ${plural(seen.calls, "LLM call")}, ${plural(seen.hits, "cache hit")}`;
  let report = null;
  let failure = null;
  try {
    await streamRun("/runs/stream", {
      assistant_id: "ingest",
      input: {paths},
      context: {collection: state.collection},
      stream_mode: ["custom", "values"],
      stream_subgraphs: true,
    }, (kind, data) => {
      if (kind === "custom") {
        const e = data || {};
        if (e.event === "loaded") { seen.documents = e.documents || 0; seen.unchanged = e.unchanged || 0; }
        else if (e.event === "split") seen.chunks += e.chunks || 0;
        else if (e.event === "decided" || e.event === "llm") {
          seen.labelled += e.event === "decided" ? 1 : 0;
          seen.calls += e.llm_calls || 0;
          seen.hits += e.cache_hits || 0;
        } else if (e.event === "stored") seen.stored += 1;
        else if (e.event === "problem" || e.event === "warning") {
          warnings.append(el("li", {text: `${e.event === "problem" ? "skipped" : "warning"} ${e.source}: ${e.reason}`}));
        }
        if (seen.chunks) { bar.max = seen.chunks; bar.value = seen.labelled; }
        text.textContent = describe();
      } else if (kind === "values" && data && data.report) {
        report = data;
      } else if (kind === "error") {
        failure = runError(data);
      }
    });
  } catch (error) {
    failure = error.message;
  }
  box.removeAttribute("aria-busy");
  forms.forEach((button) => { button.disabled = false; });
  if (failure) {
    bar.value = 0;
    text.textContent = `The ingest failed: ${failure}`;
  } else if (report) {
    const r = report.report;
    const stored = (r.added || 0) + (r.updated || 0) + (r.unchanged || 0);
    bar.max = 1; bar.value = stored ? 1 : 0;
    const calls = (report.stats && report.stats.llm_calls) || seen.calls;
    text.textContent = `Done: added ${r.added || 0}, updated ${r.updated || 0}, unchanged ${r.unchanged || 0}, ` +
      `deleted ${r.deleted || 0}; ${plural(r.chunks_stored || 0, "chunk")} stored, ${plural(calls, "LLM call")}.`;
    $("progress-title").textContent = stored ? "Documents added" : "Nothing was added";
    const listed = new Set([...warnings.children].map((li) => li.textContent));
    for (const [label, items] of [["skipped", report.problems || []], ["warning", report.warnings || []]]) {
      for (const item of items) {
        const line = `${label} ${item.source}: ${item.reason}`;
        if (!listed.has(line)) warnings.append(el("li", {text: line}));
      }
    }
  }
  state.documents = new Map();
  await refreshCollections().catch(() => {});
  await loadDocuments();
}

// ---- start ------------------------------------------------------------------------------

async function start() {
  setUpTabs();
  $("ask-form").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("new-conversation").addEventListener("click", newConversation);
  $("collection").addEventListener("change", collectionChosen);
  $("collection").addEventListener("keydown", (event) => { if (event.key === "Enter") collectionChosen(); });
  $("upload-form").addEventListener("submit", uploadFiles);
  $("folder-form").addEventListener("submit", addFolder);
  try {
    const settings = await call(`${API}/settings`);
    state.maxQuestion = settings.max_question_chars;
    fillCollections(settings.collections);
    const asked = new URLSearchParams(location.search).get("collection");
    setCollection(asked || settings.collection);
  } catch (error) {
    notify(error.message);
  }
  const view = location.hash.slice(1);
  show(TABS.includes(view) ? view : "ask");
  document.body.dataset.ready = "true";
}

document.addEventListener("DOMContentLoaded", start);
