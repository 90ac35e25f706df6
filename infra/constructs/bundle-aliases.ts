/**
 * Packages every Skiff bundle replaces (esbuild `alias`), in a module of their own so that the bundle measures
 * (`bench/lambdas.ts`) and tests, which build as `cdk synth` does, use them without loading the CDK.
 */
import { fileURLToPath } from 'node:url';

/**
 * Package name → the file bundled in its place, for code a Lambda's path never runs: `whatwg-url`, node-fetch 2's
 * fallback `URL` for Node before 10 (`whatwg-url-native.ts`). `skiffBundling` (`skiff-function.ts`) passes each as
 * `--alias:name=path`.
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  'whatwg-url': fileURLToPath(new URL('./whatwg-url-native.ts', import.meta.url)),
};
