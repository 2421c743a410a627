// The dashboard: routes /ui/<page> to a page, keeps the cluster live over one watch stream, and re-renders
// the current page when it changes. Every page has its own address, so any view can be linked to.
import { getJson, setToken, SignInNeeded, stream, takeTokenFromAddress, token } from "./api.js";
import { ClusterState } from "./store.js";
import * as pages from "./pages.js";

const main = document.getElementById("main");
const live = document.getElementById("live");
const AUDIT_LIMIT = 200;

let state = null;
let info = null;
let decisions = [];
let view = { page: "overview", name: null };
const filters = { replicas: "", audit: "" };
let whyOf = { name: null, answer: null, revision: null };
let auditEntries = [];
let auditStream = null;

function route() {
  const path = location.pathname.replace(/^\/ui\/?/, "").replace(/\/$/, "");
  const [page, ...rest] = path.split("/");
  const name = rest.length ? decodeURIComponent(rest.join("/")) : null;
  const known = { "": "overview", nodes: name ? "node" : "nodes", queues: "queues", workloads: "workloads",
    replicas: name ? "replica" : "replicas", audit: "audit" };
  view = { page: known[page] ?? "missing", name };
  for (const a of document.querySelectorAll("nav a")) {
    const current = a.getAttribute("href") === "/ui/" ? path === "" : path.startsWith(a.getAttribute("href").slice(4));
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (view.page === "audit") startAudit();
  else stopAudit();
  render();
}

function render() {
  if (!state) return;
  let html;
  switch (view.page) {
    case "overview": html = pages.overviewPage(state, info, decisions); break;
    case "nodes": html = pages.nodesPage(state, gpuViews()); break;
    case "node": html = pages.nodePage(state, view.name, lossFor(view.name), gpuViews().get(view.name)); break;
    case "queues": html = pages.queuesPage(state); break;
    case "workloads": html = pages.workloadsPage(state); break;
    case "replicas": html = pages.replicasPage(state, filters.replicas); break;
    case "replica": html = pages.replicaPage(state, view.name, whyFor(view.name)); break;
    case "audit": html = pages.auditPage(auditEntries, filters.audit); break;
    default: html = `<h1>Not found</h1><p>No page at ${pages.esc(location.pathname)}. <a href="/ui/">Overview</a></p>`;
  }
  const focused = document.activeElement?.id;
  const caret = document.activeElement?.selectionStart;
  main.innerHTML = html;
  if (focused) {
    const element = document.getElementById(focused);
    if (element) {
      element.focus();
      if (caret !== undefined && element.setSelectionRange) element.setSelectionRange(caret, caret);
    }
  }
}

let gpu = { views: new Map(), revision: null, reading: false };
const GPU_READ_GAP_MS = 1000;

function gpuViews() {
  // The nodes' GPU figures (status.gpu) are computed when a node is read, so the watch stream's stored
  // nodes lack them: the nodes are read again once the cluster has changed, one read at a time and at
  // most one a second (a busy cluster changes far more often than that); a cluster without GPUs has none.
  const anyGpu = state.list("Node").some((node) => pages.allocatable(node).gpu > 0);
  if (anyGpu && gpu.revision !== state.revision && !gpu.reading) {
    const revision = state.revision;
    gpu.reading = true;
    getJson("/api/nodes")
      .then((answer) => {
        gpu.views = new Map(answer.items.filter((n) => n.status?.gpu).map((n) => [n.metadata.name, n.status.gpu]));
        render();
      })
      .catch(failed)
      .finally(() => {
        gpu.revision = revision;
        setTimeout(() => {
          gpu.reading = false;
          if (gpu.revision !== state.revision && (view.page === "nodes" || view.page === "node")) render();
        }, GPU_READ_GAP_MS);
      });
  }
  return gpu.views;
}

let lossOf = { name: null, answer: null, revision: null };

function lossFor(name) {
  // A NotReady node's node-loss timeline, asked for again whenever the node changes.
  const node = state.get("Node", name);
  const revision = node?.metadata?.revision ?? null;
  if (lossOf.name !== name || lossOf.revision !== revision) {
    lossOf = { name, answer: lossOf.name === name ? lossOf.answer : null, revision };
    if (node && node.status?.state === "NotReady") {
      getJson(`/api/nodes/${encodeURIComponent(name)}/node-loss`)
        .then((answer) => { if (lossOf.name === name) { lossOf.answer = answer.node_loss; render(); } })
        .catch(failed);
    } else {
      lossOf.answer = null;
    }
  }
  return lossOf.answer;
}

function whyFor(name) {
  // The explanation is asked for again whenever the replica changes (the watch stream says so).
  const replica = state.get("Replica", name);
  const revision = replica?.metadata?.revision ?? null;
  if (whyOf.name !== name || whyOf.revision !== revision) {
    whyOf = { name, answer: whyOf.name === name ? whyOf.answer : null, revision };
    if (replica) {
      getJson(`/api/replicas/${encodeURIComponent(name)}/why`)
        .then((answer) => { if (whyOf.name === name) { whyOf.answer = answer; render(); } })
        .catch(failed);
    }
  }
  return whyOf.answer;
}

async function refreshOverview() {
  try {
    info = await getJson("/api/info");
  } catch (error) {
    if (error instanceof SignInNeeded) throw error;
    info = null;
  }
  try {
    // Only what is new since the last look: the audit log grows without end.
    const since = decisions.length ? decisions[0].seq + 1 : 0;
    const audit = await getJson(`/api/audit?since=${since}`);
    decisions = [...audit.items.slice(-10).reverse(), ...decisions].slice(0, 10);
  } catch (error) {
    if (error instanceof SignInNeeded) throw error;
  }
}

function auditQuery() {
  const types = filters.audit.split(",").map((t) => t.trim()).filter(Boolean);
  return types.length ? `type=${encodeURIComponent(types.join(","))}` : "";
}

async function startAudit() {
  stopAudit();
  const controller = new AbortController();
  auditStream = controller;
  auditEntries = [];
  try {
    const first = await getJson(`/api/audit?${auditQuery()}`, controller.signal);
    auditEntries = first.items.slice(-AUDIT_LIMIT).reverse();
    render();
    const since = auditEntries.length ? auditEntries[0].seq + 1 : 0;
    await stream(`/api/audit?follow=true&since=${since}&${auditQuery()}`, (type, entry) => {
      if (type !== "audit") return;
      if (auditEntries.length && entry.seq <= auditEntries[0].seq) return;
      auditEntries = [entry, ...auditEntries].slice(0, AUDIT_LIMIT);
      render();
    }, controller.signal);
  } catch (error) {
    if (error.name !== "AbortError") failed(error);
  }
}

function stopAudit() {
  if (auditStream) auditStream.abort();
  auditStream = null;
}

function failed(error) {
  if (error instanceof SignInNeeded) signIn();
  else live.textContent = `error: ${error.message}`;
}

function signIn(message = "") {
  const dialog = document.getElementById("signin");
  document.getElementById("signin-error").textContent = message;
  if (!dialog.open) dialog.showModal();
}

async function boot() {
  takeTokenFromAddress();
  if (!token()) {
    signIn();
    return;
  }
  try {
    state = new ClusterState(render, (text) => { live.textContent = text; });
    await refreshOverview();
    route();
    await state.start();
  } catch (error) {
    state?.stop();
    state = null;
    if (error instanceof SignInNeeded) signIn("That token was not accepted.");
    else failed(error);
  }
}

document.getElementById("signin-form").addEventListener("submit", (event) => {
  const value = document.getElementById("token-input").value.trim();
  if (!value) {
    event.preventDefault();
    return;
  }
  setToken(value);
  boot();
});

document.addEventListener("click", (event) => {
  const a = event.target.closest("a[href^='/ui/']");
  if (!a || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  history.pushState(null, "", a.getAttribute("href"));
  route();
  main.focus();
});

document.addEventListener("input", (event) => {
  if (event.target.id === "replica-filter") {
    filters.replicas = event.target.value;
    render();
  } else if (event.target.id === "audit-filter") {
    filters.audit = event.target.value;
    clearTimeout(startAudit.timer);
    startAudit.timer = setTimeout(startAudit, 300);
  }
});

window.addEventListener("popstate", route);
setInterval(() => { if (state && view.page === "overview") refreshOverview().then(render).catch(failed); }, 5000);
boot();
