#!/usr/bin/env node
// Entry point of the `stagediff` command. The server is TypeScript run through tsx's loader, so
// there is no build step between a checkout and a working CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
