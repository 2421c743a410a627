// The cluster as the API shows it, kept live by one watch stream: list every kind once, then apply each
// change after the list's revision. `onChange` is told (at most once per frame) when anything moved.
import { getJson, stream, SignInNeeded } from "./api.js";

export const KINDS = { Node: "nodes", Replica: "replicas", Deployment: "deployments", Job: "jobs", Queue: "queues" };

export class ClusterState {
  constructor(onChange, onStatus) {
    this.objects = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, new Map()]));
    this.revision = 0;
    this.onChange = onChange;
    this.onStatus = onStatus;
    this.scheduled = false;
    this.controller = null;
  }

  list(kind) {
    return [...this.objects[kind].values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  get(kind, name) {
    return this.objects[kind].get(name);
  }

  async start() {
    for (;;) {
      this.controller = new AbortController();
      try {
        await this.load();
        this.onStatus("live");
        await stream(`/api/watch?kinds=${Object.values(KINDS).join(",")}&from_revision=${this.revision + 1}`,
          (type, data) => this.apply(type, data), this.controller.signal);
      } catch (error) {
        if (error instanceof SignInNeeded) throw error;
        if (error.name === "AbortError") return;
        this.onStatus("reconnecting…");
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  stop() {
    if (this.controller) this.controller.abort();
  }

  async load() {
    let revision = 0;
    for (const [kind, plural] of Object.entries(KINDS)) {
      const answer = await getJson(`/api/${plural}`);
      this.objects[kind] = new Map(answer.items.map((item) => [item.metadata.name, item]));
      revision = Math.max(revision, answer.revision || 0);
    }
    this.revision = revision;
    this.changed();
  }

  apply(type, data) {
    if (type === "relist") throw new Error("relist");  // the reconnect loop lists again
    if (type === "error") throw new Error(data.message || "watch error");
    const table = this.objects[data.kind];
    if (!table) return;
    if (type === "put" && data.object) table.set(data.name, data.object);
    else if (type === "delete") table.delete(data.name);
    this.revision = Math.max(this.revision, data.revision || 0);
    this.changed();
  }

  changed() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.onChange();
    });
  }
}
