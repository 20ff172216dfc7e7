#!/usr/bin/env node
// The `staragent` command: registers the TypeScript loader, then runs the CLI.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../main.ts");
process.exitCode = await main(process.argv.slice(2), process.env);
