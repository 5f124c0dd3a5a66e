#!/usr/bin/env node
// The `warren` command: runs the compiled broker (npm install builds it via `prepare`).
import { main } from '../dist/main.js';

main();
