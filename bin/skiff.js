#!/usr/bin/env node
// The `skiff` command: runs the TypeScript CLI through tsx's loader, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
await import('../shared/cli/skiff.ts');
