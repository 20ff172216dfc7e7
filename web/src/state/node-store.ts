import type { Node } from "../../../gen/staragent/v1/node_service_pb.js";

/** The Hub's nodes as WatchNodes last described them (each event carries the whole list). */
export class NodeStore {
  private list: readonly Node[] = [];
  private readonly listeners = new Set<() => void>();
  loaded = false;

  get nodes(): readonly Node[] {
    return this.list;
  }

  set(nodes: readonly Node[]): void {
    this.list = nodes;
    this.loaded = true;
    for (const l of this.listeners) l();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  clear(): void {
    this.list = [];
    this.loaded = false;
  }
}
