import { Connectivity, type Node } from "../../gen/staragent/v1/node_service_pb.js";
import { enumWord } from "./format.js";

/** Says what became of a Node added or changed: where it is, whether it answers, and why not. */
export function reportNode(verb: string, node: Node): void {
  const state = enumWord(Connectivity, node.connectivity);
  process.stdout.write(`${verb} ${node.name} at ${node.url}: ${state}\n`);
  if (node.connectivity === Connectivity.OFFLINE) process.stderr.write(`warning: ${node.name}: ${node.lastError}\n`);
  if (node.connectivity === Connectivity.CONNECTING) {
    process.stderr.write(`${node.name} has not answered yet; 'staragent nodes ls' shows how it goes\n`);
  }
}
