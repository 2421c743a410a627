// The pages: each takes what it shows and returns HTML (every value escaped).
import { RESOURCES, quantity, resources, show } from "./quantities.js";

const HOLDING = new Set(["Scheduled", "Running", "Terminating"]);

export function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

const link = (path, text) => `<a href="/ui/${path}">${esc(text)}</a>`;
const nodeLink = (name) => (name ? link(`nodes/${encodeURIComponent(name)}`, name) : "-");
const replicaLink = (name) => link(`replicas/${encodeURIComponent(name)}`, name);
const phaseOf = (replica) => replica.status?.phase || "Pending";
const lastCondition = (obj, type) => [...(obj.status?.conditions || [])].reverse().find((c) => !type || c.type === type);

function table(headers, rows, empty = "Nothing here yet.") {
  if (!rows.length) return `<p>${esc(empty)}</p>`;
  const head = headers.map((h) => `<th scope="col">${esc(h)}</th>`).join("");
  return `<div class="table-wrap"><table><thead><tr>${head}</tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
}

function bar(used, total, resource) {
  if (!total) return `<span class="bar-label">-</span>`;
  const share = Math.min(1, used / total);
  const label = `${show(resource, used)} / ${show(resource, total)}`;
  return `<progress max="100" value="${(share * 100).toFixed(1)}" aria-label="${esc(resource)} ${esc(label)}"></progress>` +
    `<span class="bar-label">${esc(label)}</span>`;
}

export function replicaRequest(replica) {
  const spec = replica.spec || {};
  const request = resources(spec.resources || spec.request || {});
  if (!request.gpu && spec.gpus && typeof spec.gpus === "number") request.gpu = spec.gpus;
  return request;
}

export function allocatable(node) {
  if (node.status?.allocatable) return resources(node.status.allocatable);
  const capacity = resources(node.spec?.capacity);
  const reserved = resources(node.spec?.system_reserved);
  return Object.fromEntries(RESOURCES.map((r) => [r, Math.max(0, capacity[r] - reserved[r])]));
}

export function usageByNode(replicas) {
  const usage = new Map();
  for (const replica of replicas) {
    const node = replica.status?.node_ref;
    if (!node || !HOLDING.has(phaseOf(replica))) continue;
    const sum = usage.get(node) || { cpu: 0, memory: 0, gpu: 0, count: 0 };
    const request = replicaRequest(replica);
    for (const r of RESOURCES) sum[r] += request[r];
    sum.count += 1;
    usage.set(node, sum);
  }
  return usage;
}

function countBy(items, key) {
  const counts = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] || 0) + 1;
  return counts;
}

function card(label, value) {
  return `<div class="card"><div class="value">${esc(value)}</div><div class="label">${esc(label)}</div></div>`;
}

export function overviewPage(state, info, decisions) {
  const nodes = state.list("Node");
  const replicas = state.list("Replica");
  const ready = nodes.filter((n) => n.status?.state === "Ready").length;
  const phases = countBy(replicas, phaseOf);
  const usage = usageByNode(replicas);
  const totals = { cpu: [0, 0], memory: [0, 0], gpu: [0, 0] };
  for (const node of nodes) {
    if (node.status?.state !== "Ready") continue;
    const alloc = allocatable(node);
    const used = usage.get(node.metadata.name) || {};
    for (const r of RESOURCES) {
      totals[r][0] += used[r] || 0;
      totals[r][1] += alloc[r];
    }
  }
  const leader = info?.leader?.leader ?? info?.leader_status?.leader ?? info?.leader ?? "unknown";
  const cards = [
    card("nodes ready / total", `${ready} / ${nodes.length}`),
    card("replicas", replicas.length),
    card("pending", phases.Pending || 0),
    card("running", phases.Running || 0),
    card("leader", typeof leader === "string" ? leader : JSON.stringify(leader)),
  ].join("");
  const use = RESOURCES.map((r) => `<tr><th scope="row">${r}</th><td>${bar(totals[r][0], totals[r][1], r)}</td></tr>`);
  const byPhase = Object.entries(phases).sort().map(([phase, n]) => `<tr><td class="phase-${esc(phase)}">${esc(phase)}</td><td>${n}</td></tr>`);
  const recent = decisions.map((e) => `<tr><td>${esc(e.time)}</td><td>${esc(e.type)}</td><td>${esc(e.object)}</td><td>${esc(e.message)}</td></tr>`);
  return `<h1>Overview</h1><div class="cards">${cards}</div>
    <h2>Allocated on Ready nodes</h2><div class="table-wrap"><table id="utilisation"><tbody>${use.join("")}</tbody></table></div>
    <h2>Replicas by phase</h2>${table(["phase", "replicas"], byPhase)}
    <h2>Recent decisions</h2>${table(["time", "type", "object", "message"], recent, "No decisions yet.")}`;
}

// A node's GPU figures (status.gpu of GET /api/nodes): its devices, each with the share held; the largest
// GPU request it could take now and its free GPUs the workload's shapes cannot use (as get nodes -o wide).
const gpus = (amount) => `${Number(amount.toFixed(2))} GPU`;

function deviceBars(view) {
  if (!view) return "-";
  const bars = view.devices.map((d) => {
    const label = `device ${d.index}: ${show("gpu", d.used)} of 1 GPU held`;
    return `<progress class="device" max="100" value="${(100 * Math.min(1, d.used)).toFixed(1)}" title="${esc(label)}" aria-label="${esc(label)}"></progress>`;
  });
  return `<div class="devices">${bars.join("")}</div>`;
}

function gpuShape(view) {
  return view ? `${gpus(view.largest_schedulable)} / ${gpus(view.fragmented)}` : "-";
}

export function nodesPage(state, gpuViews = new Map()) {
  const usage = usageByNode(state.list("Replica"));
  const rows = state.list("Node").map((node) => {
    const name = node.metadata.name;
    const alloc = allocatable(node);
    const used = usage.get(name) || { cpu: 0, memory: 0, gpu: 0, count: 0 };
    const stateText = node.status?.state || "Unknown";
    const pressure = node.status?.pressure;
    const pressureText = pressure ? `cpu ${Math.round(100 * (pressure.cpu || 0))}%, mem ${Math.round(100 * (pressure.memory || 0))}%` : "-";
    const view = gpuViews.get(name);
    return `<tr data-node="${esc(name)}"><td>${nodeLink(name)}</td><td class="state-${esc(stateText)}">${esc(stateText)}</td>
      <td>${node.spec?.unschedulable ? "cordoned" : ""}</td>
      ${RESOURCES.map((r) => `<td>${bar(used[r], alloc[r], r)}</td>`).join("")}
      <td class="gpu-devices">${deviceBars(view)}</td><td class="gpu-shape">${esc(gpuShape(view))}</td>
      <td>${used.count}</td><td class="hide-narrow">${esc(pressureText)}</td></tr>`;
  });
  const headers = ["node", "state", "cordon", "cpu", "memory", "gpu", "GPU devices", "largest GPU request / fragmented", "replicas", "pressure"];
  return `<h1>Nodes</h1>${table(headers, rows, "No nodes registered.")}`;
}

function gpuSection(view) {
  if (!view) return "";
  const rows = view.devices.map((d) => `<tr data-device="${d.index}"><td>${d.index}</td><td>${esc(d.model || "-")}</td>
    <td>${bar(d.used, 1, "gpu")}</td><td>${d.replicas.map(replicaLink).join(", ") || "free"}</td></tr>`);
  return `<h2>GPU devices</h2>
    <dl class="facts" id="gpu-figures"><dt>largest GPU request it could take now</dt><dd>${esc(gpus(view.largest_schedulable))}</dd>
    <dt>fragmented (free GPU the workload's shapes cannot use)</dt><dd>${esc(gpus(view.fragmented))}</dd></dl>
    ${table(["device", "model", "held", "replicas"], rows, "No devices.")}`;
}

export function nodePage(state, name, loss, gpuView = null) {
  const node = state.get("Node", name);
  if (!node) return `<h1>Node ${esc(name)}</h1><p class="error">No such node (it may have been removed).</p>`;
  const replicas = state.list("Replica").filter((r) => r.status?.node_ref === name);
  const conditions = (node.status?.conditions || []).map((c) =>
    `<tr><td>${esc(c.last_transition_time)}</td><td>${esc(c.type)}</td><td>${esc(c.status)}</td><td>${esc(c.reason)}</td><td>${esc(c.message)}</td></tr>`);
  return `<h1>Node ${esc(name)}</h1>
    <dl class="facts"><dt>state</dt><dd class="state-${esc(node.status?.state)}">${esc(node.status?.state || "Unknown")}</dd>
    <dt>cordoned</dt><dd>${node.spec?.unschedulable ? "yes" : "no"}</dd>
    <dt>last heartbeat</dt><dd>${esc(node.status?.last_heartbeat || "-")}</dd>
    <dt>labels</dt><dd>${esc(Object.entries(node.metadata.labels || {}).map(([k, v]) => `${k}=${v}`).join(", ") || "-")}</dd></dl>
    ${gpuSection(gpuView)}
    ${nodeLossSection(loss)}
    <h2>Conditions (oldest first)</h2>${table(["time", "type", "status", "reason", "message"], conditions, "No conditions.")}
    <h2>Replicas here</h2>${replicaTable(replicas)}`;
}

function replicaTable(replicas) {
  const rows = replicas.map((r) => {
    const condition = lastCondition(r, "Phase");
    return `<tr><td>${replicaLink(r.metadata.name)}</td><td class="phase-${esc(phaseOf(r))}">${esc(phaseOf(r))}</td>
      <td>${nodeLink(r.status?.node_ref)}</td><td>${esc(r.status?.restart_count ?? 0)}</td><td>${esc(condition?.reason || "")}</td></tr>`;
  });
  return table(["replica", "phase", "node", "restarts", "reason"], rows, "No replicas.");
}

export function replicasPage(state, filter) {
  const wanted = (filter || "").toLowerCase();
  const replicas = state.list("Replica").filter((r) => !wanted || `${r.metadata.name} ${phaseOf(r)} ${r.status?.node_ref || ""}`.toLowerCase().includes(wanted));
  return `<h1>Replicas</h1><div class="filters"><label for="replica-filter">Filter</label>
    <input id="replica-filter" type="search" value="${esc(filter || "")}" placeholder="name, phase or node"></div>${replicaTable(replicas)}`;
}

// The node-loss timeline (`why`'s node_loss, `GET /api/nodes/<name>/node-loss`): what happened and what
// the control plane will do next, and exactly when.
export function nodeLossSection(loss) {
  if (!loss) return "";
  const steps = (loss.steps || []).map((step) => `<tr><td>${esc(step.at)}</td><td>${esc(step.what)}</td></tr>`);
  const next = loss.next ? `<p id="node-loss-next"><strong>Next:</strong> ${esc(loss.next.at)}: ${esc(loss.next.what)}</p>` : "";
  return `<h2>Node-loss timeline of ${nodeLink(loss.node)} (policy ${esc(loss.policy)})</h2>
    ${table(["time", "what happened"], steps, "Nothing yet.")}${next}`;
}

export function replicaPage(state, name, why) {
  const replica = state.get("Replica", name);
  if (!replica) return `<h1>Replica ${esc(name)}</h1><p class="error">No such replica.</p>`;
  const summary = Object.entries(why?.summary || {}).map(([category, count]) => `<tr><td>${esc(category)}</td><td>${esc(count)}</td></tr>`);
  const nodes = Object.entries(why?.nodes || {}).map(([node, reason]) => `<tr><td>${nodeLink(node)}</td><td>${esc(typeof reason === "string" ? reason : JSON.stringify(reason))}</td></tr>`);
  const hints = (why?.hints || []).map((hint) => `<li>${esc(typeof hint === "string" ? hint : hint.text || JSON.stringify(hint))}</li>`).join("");
  const conditions = (replica.status?.conditions || []).map((c) =>
    `<tr><td>${esc(c.last_transition_time)}</td><td>${esc(c.type)}</td><td>${esc(c.reason)}</td><td>${esc(c.message)}</td></tr>`);
  return `<h1>Replica ${esc(name)}</h1>
    <dl class="facts"><dt>phase</dt><dd class="phase-${esc(phaseOf(replica))}">${esc(phaseOf(replica))}</dd>
    <dt>node</dt><dd>${nodeLink(replica.status?.node_ref)}</dd>
    <dt>owner</dt><dd>${esc(replica.spec?.owner || "-")}${replica.spec?.service ? ` / ${esc(replica.spec.service)}` : ""}</dd>
    <dt>restarts</dt><dd>${esc(replica.status?.restart_count ?? 0)}</dd>
    <dt>why</dt><dd id="why-reason">${esc(why?.reason || why?.message || "")}</dd>
    ${why?.next_attempt_at ? `<dt>next attempt</dt><dd>${esc(why.next_attempt_at)}</dd>` : ""}</dl>
    <h2>Rejected nodes by category</h2>${table(["category", "nodes"], summary, "No node was rejected.")}
    <h2>Every node's reason</h2>${table(["node", "reason"], nodes, "No per-node reasons.")}
    <h2>Hints</h2>${hints ? `<ul>${hints}</ul>` : "<p>No hints.</p>"}
    ${nodeLossSection(why?.node_loss)}
    <h2>Conditions</h2>${table(["time", "type", "reason", "message"], conditions, "No conditions.")}`;
}

export function queuesPage(state) {
  const replicas = state.list("Replica");
  const allocated = new Map();
  for (const replica of replicas) {
    if (!HOLDING.has(phaseOf(replica))) continue;
    const queue = replica.spec?.queue || "default";
    const sum = allocated.get(queue) || { cpu: 0, memory: 0, gpu: 0 };
    const request = replicaRequest(replica);
    for (const r of RESOURCES) sum[r] += request[r];
    allocated.set(queue, sum);
  }
  const queues = state.list("Queue");
  const children = new Map();
  for (const queue of queues) {
    const parent = queue.spec?.parent || "";
    children.set(parent, [...(children.get(parent) || []), queue]);
  }
  const rows = [];
  const walk = (parent, depth) => {
    for (const queue of children.get(parent) || []) {
      const name = queue.metadata.name;
      const deserved = resources(queue.spec?.deserved);
      const limit = resources(queue.spec?.limit);
      const fair = queue.status?.fair_share ? resources(queue.status.fair_share) : null;
      const used = allocated.get(name) || { cpu: 0, memory: 0, gpu: 0 };
      const cells = RESOURCES.map((r) => {
        const total = limit[r] || fair?.[r] || deserved[r];
        const parts = [`deserved ${show(r, deserved[r])}`];
        if (fair) parts.push(`fair share ${show(r, fair[r])}`);
        if (limit[r]) parts.push(`limit ${show(r, limit[r])}`);
        return `<td>${bar(used[r], total, r)}<div class="bar-label">${esc(parts.join(", "))}</div></td>`;
      }).join("");
      rows.push(`<tr><td class="depth-${Math.min(depth, 5)}">${esc(name)}</td><td>${esc(queue.spec?.priority ?? 0)}</td>${cells}</tr>`);
      walk(name, depth + 1);
    }
  };
  walk("", 0);
  return `<h1>Queues</h1><p>Bars: allocated against the limit (or the fair share, or the deserved quota).
    A queue is given its deserved quota first; what is left is shared by over-quota weight.</p>
    ${table(["queue", "priority", "cpu", "memory", "gpu"], rows, "No queues: everything runs in the default queue.")}`;
}

export function workloadsPage(state) {
  const replicas = state.list("Replica");
  const byOwner = new Map();
  for (const replica of replicas) {
    const owner = replica.spec?.owner;
    byOwner.set(owner, [...(byOwner.get(owner) || []), replica]);
  }
  const row = (kind, obj, desired) => {
    const mine = byOwner.get(obj.metadata.name) || [];
    const phases = countBy(mine, phaseOf);
    const restarts = mine.reduce((sum, r) => sum + (r.status?.restart_count || 0), 0);
    const rollout = obj.status?.rollout;
    const rolloutText = rollout ? `${rollout.state} ${rollout.current_step ?? ""}/${rollout.total_steps ?? ""}` : "-";
    return `<tr><td>${esc(kind)}</td><td>${esc(obj.metadata.name)}</td><td>${phases.Running || 0} / ${desired}</td>
      <td>${phases.Pending || 0}</td><td>${restarts}</td><td>${esc(rolloutText)}</td>
      <td>${mine.slice(0, 8).map((r) => replicaLink(r.metadata.name)).join(", ")}${mine.length > 8 ? " …" : ""}</td></tr>`;
  };
  const rows = [
    ...state.list("Deployment").map((d) => row("Deployment", d, (d.spec?.services || []).reduce((s, svc) => s + (svc.replicas ?? 1), 0))),
    ...state.list("Job").map((j) => row("Job", j, j.spec?.tasks ?? 1)),
  ];
  return `<h1>Deployments and jobs</h1>${table(["kind", "name", "running", "pending", "restarts", "rollout", "replicas"], rows, "Nothing applied yet.")}`;
}

export function auditPage(entries, filter) {
  const rows = entries.map((e) => `<tr><td>${esc(e.seq)}</td><td>${esc(e.time)}</td><td>${esc(e.type)}</td><td>${esc(e.actor)}</td><td>${esc(e.object)}</td><td>${esc(e.message)}</td></tr>`);
  return `<h1>Audit log</h1><div class="filters"><label for="audit-filter">Types</label>
    <input id="audit-filter" type="search" value="${esc(filter || "")}" placeholder="e.g. bind,node_not_ready"></div>
    ${table(["seq", "time", "type", "actor", "object", "message"], rows, "No entries.")}`;
}

export { quantity };
