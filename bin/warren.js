#!/usr/bin/env -S node --max-semi-space-size=64
// The `warren` command: runs the compiled broker (npm install builds it via `prepare`).
// A 64 MiB young generation keeps per-message garbage out of the old generation: the profiles
// in BENCHMARKS.md show 6-27% less broker CPU per message with it.
// launch() starts the broker in a Node whose heap fits the memory watermark
// (--max-old-space-size; see src/launcher.ts).
import { launch } from '../dist/launcher.js';

launch();
