/**
 * The interruption Lambda's entry point (what the CDK stack's bundle exports): the handler of `./handler.ts` bound to
 * the production dependencies of `shared/lambda/wiring.ts` with the launch templates of `launch-wiring.ts`, built from
 * the environment on the first invocation (no import-time side effects) and reused while the container stays warm.
 */
import type { SQSEvent } from 'aws-lambda';
import { ec2LaunchTemplates } from '../../shared/lambda/launch-wiring.js';
import { interruptionDepsFromEnv } from '../../shared/lambda/wiring.js';
import { createHandler } from './handler.js';

let production: ReturnType<typeof createHandler> | undefined;

/**
 * The Lambda handler.
 * @throws {ConfigurationError} on the first invocation when an environment variable is missing or unusable
 */
export const handler = (event: SQSEvent, context?: unknown): ReturnType<ReturnType<typeof createHandler>> => {
  production ??= createHandler(interruptionDepsFromEnv(process.env, ec2LaunchTemplates));
  return production(event, context);
};
