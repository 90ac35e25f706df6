/**
 * Entry point of the `skiff` command (`npm run skiff`, `npx skiff`). Sets process-wide options before the
 * AWS SDK loads, then runs the CLI.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.POWERTOOLS_DEV ??= 'true';
// A closed pipe (`skiff simulate … | head`) is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
const { main } = await import('./main.js');
process.exitCode = await main(process.argv.slice(2));
