/**
 * What every Skiff bundle gets for `whatwg-url` (`BUNDLE_ALIASES` in `bundle-aliases.ts`): Node's own WHATWG
 * `URL`, under the name `whatwg-url` exports it.
 *
 * The only importer is node-fetch 2.7 (client-node's HTTP library), which reads `require('url').URL ||
 * whatwgUrl.URL`: a fallback for Node versions before 10, never taken on Node 20 or 22. Its static import still put
 * `whatwg-url` 5 and `tr46` 0.0.3, with its 260 KB Unicode mapping table, in each controller bundle (0.29 MB), and
 * ran them at every cold start (docs/architecture.md#lambda-bundles). `test/architecture/lambda-bundles.test.ts`
 * fails if anything but node-fetch imports it.
 */
export default { URL: globalThis.URL };
