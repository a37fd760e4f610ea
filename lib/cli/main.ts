#!/usr/bin/env node
// The `berth` bin (package.json "bin"): see `berth --help` and docs/cli.md.
import { run } from './run';

void run(process.argv).then((code) => {
  process.exitCode = code;
});
