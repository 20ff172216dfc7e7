#!/usr/bin/env node
// The `staragent` command. Installed, it runs compiled from dist/ (`make build`); stack traces name the
// .ts lines through the source maps the build writes beside each file.
process.setSourceMapsEnabled(true);
const { main } = await import("../main.js");
process.exitCode = await main(process.argv.slice(2), process.env);
