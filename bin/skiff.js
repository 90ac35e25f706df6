#!/usr/bin/env node
// The `skiff` command: runs the TypeScript CLI through tsx's loader, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../shared/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
