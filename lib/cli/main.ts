#!/usr/bin/env node
// The `berth` bin (package.json "bin"): see `berth --help` and the README's "Command line".
import { run } from './run';

void run(process.argv).then((code) => {
  process.exitCode = code;
});
