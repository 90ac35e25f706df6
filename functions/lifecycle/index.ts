/**
 * The lifecycle Lambda's entry point (what the CDK stack's bundle exports): the handler of `./handler.ts` bound to
 * the production dependencies of `shared/lambda/wiring.ts`, built from the environment on the first invocation (no
 * import-time side effects) and reused while the container stays warm.
 */
import { lifecycleDepsFromEnv } from '../../shared/lambda/wiring.js';
import { createHandler, type LifecycleEvent } from './handler.js';

let production: ReturnType<typeof createHandler> | undefined;

/**
 * The Lambda handler: an EventBridge scheduled event, or a relay node event.
 * @throws {ConfigurationError} on the first invocation when an environment variable is missing or unusable
 */
export const handler = (event: LifecycleEvent, context?: unknown): ReturnType<ReturnType<typeof createHandler>> => {
  production ??= createHandler(lifecycleDepsFromEnv(process.env));
  return production(event, context);
};
